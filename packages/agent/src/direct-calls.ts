import { Service } from '@deepseek-ai/cordis'

/**
 * Let callers reach `service`'s methods without a per-call shadow context. Through `ctx.<service>`,
 * Cordis normally wraps every method it hands out: a child context, two proxies and a property
 * overlay per call, the largest single cost of a `true` send. A service whose methods only take the
 * caller's context from `this.ctx` (for an effect that belongs to the caller) does not need that
 * wrapping: `this.ctx` still is the context the service was reached through. Call it right after
 * `super()`; the service then offers no `ctx.<service>.<name>` mixins.
 */
export function directCalls(service: Service): void {
  // Without `associate` too: no `<service>.<name>` mixin is looked up on every property read.
  ;(service as unknown as Record<symbol, object>)[Service.tracker] = { property: 'ctx', noShadow: true }
}
