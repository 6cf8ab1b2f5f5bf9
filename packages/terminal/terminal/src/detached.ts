import type { SessionRecord } from './session-record'
import type { TerminalSessionId } from './types'

/** Reason passed to a detached session's backend when nobody adopted it within `detachedTtlMs`. */
export const DETACHED_EXPIRED_REASON = 'PTY session detached for detachedTtlMs without adoption'

/**
 * Sessions whose owner ended while the registry keeps them (`detachedTtlMs` > 0): no owner, a timer
 * that closes each at its TTL, and a synchronous `take` so that exactly one adopter wins.
 */
export class DetachedSessions {
  readonly #timers = new Map<TerminalSessionId, ReturnType<typeof setTimeout>>()

  constructor(
    /** How long one stays detached before `expire` is called for it. */
    private readonly ttlMs: number,
    /** Close an expired session (the registry's close, which forgets it once it succeeded). */
    private readonly expire: (record: SessionRecord) => void,
  ) {}

  /** Detach `record` now: its running send is released (no signal), its TTL starts. */
  add(record: SessionRecord): void {
    record.detach()
    const timer = setTimeout(() => {
      this.#timers.delete(record.id)
      this.expire(record)
    }, this.ttlMs)
    // A detached session alone must not keep a host process alive that has nothing else to do.
    timer.unref?.()
    this.#timers.set(record.id, timer)
  }

  /** Whether `id` is detached now. */
  has(id: TerminalSessionId): boolean {
    return this.#timers.has(id)
  }

  /** Stop `id`'s TTL because it was adopted or closed; false when it was not detached. */
  take(id: TerminalSessionId): boolean {
    const timer = this.#timers.get(id)
    if (timer === undefined) return false
    clearTimeout(timer)
    this.#timers.delete(id)
    return true
  }

  /** Stop every TTL (service disposal closes the sessions itself). */
  clear(): void {
    for (const timer of this.#timers.values()) clearTimeout(timer)
    this.#timers.clear()
  }
}
