import type { Agent } from 'dsh-agent'
import type { ToolResult } from './types'

/**
 * One tool call as observers see it. The same object is handed to {@link ToolCallObserver.beforeCall}
 * and {@link ToolCallObserver.afterCall}, so an observer may key what it learned before the call on it.
 */
export interface ToolCallEvent {
  readonly callId: string
  /** The tool name the caller asked for (also an unknown one). */
  readonly name: string
  /** The initiating agent, when the host gave one. */
  readonly agent: Agent | undefined
  /** The validated arguments once they passed the schema; before that, and for a refused call, what the caller sent. */
  readonly arguments: unknown
  /** True once {@link ToolCallEvent.arguments} passed the tool's schema. */
  readonly valid: boolean
  /** Wall-clock start, milliseconds since the epoch (`Date.now()`). */
  readonly startedAt: number
}

/**
 * Watches the call pipeline without taking part in it: audit logs, metrics. Both hooks are optional;
 * a throwing or rejecting hook is ignored, so an observer can never change or fail a call.
 */
export interface ToolCallObserver {
  /**
   * A known tool is about to run with valid arguments (after the agent check). The call waits for a
   * returned promise, so keep it short: it is on the path of every call while the observer is registered.
   */
  beforeCall?(call: ToolCallEvent): void | PromiseLike<void>
  /** Every call once its result is final (unknown tools and refusals included), with its duration in milliseconds. */
  afterCall?(call: ToolCallEvent, result: ToolResult, durationMs: number): void
}

/** The mutable form the pipeline fills in; observers get it as a {@link ToolCallEvent}. */
export interface MutableToolCallEvent extends ToolCallEvent {
  arguments: unknown
  valid: boolean
}

/** Run every `beforeCall` of `observers` and wait for them; failures are swallowed. */
export async function notifyBefore(observers: Iterable<ToolCallObserver>, call: ToolCallEvent): Promise<void> {
  const pending: PromiseLike<void>[] = []
  for (const observer of observers) {
    if (!observer.beforeCall) continue
    try {
      const returned = observer.beforeCall(call)
      if (returned && typeof returned.then === 'function') pending.push(Promise.resolve(returned).catch(() => undefined))
    } catch {
      // An observer never fails a call.
    }
  }
  if (pending.length) await Promise.all(pending)
}

/** Run every `afterCall` of `observers`; failures are swallowed. */
export function notifyAfter(observers: Iterable<ToolCallObserver>, call: ToolCallEvent, result: ToolResult, durationMs: number): void {
  for (const observer of observers) {
    try {
      observer.afterCall?.(call, result, durationMs)
    } catch {
      // An observer never fails a call.
    }
  }
}
