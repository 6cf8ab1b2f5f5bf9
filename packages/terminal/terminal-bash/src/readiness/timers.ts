import { MAX_TIMER_MS } from 'dsh-basics'

/** Cancels a scheduled callback; calling it after the callback ran, or twice, is harmless. */
export type Cancel = () => void

/** Monotonic milliseconds (read at call time, so fake timers in tests apply). */
export function now(): number {
  return performance.now()
}

/**
 * Run `callback` after `ms` (clamped to what a Node timer can hold: a longer wait would fire at
 * once). Callers that need longer waits re-check their deadline when it fires.
 */
export function after(ms: number, callback: () => void): Cancel {
  const timer = setTimeout(callback, Math.min(Math.max(0, Math.ceil(ms)), MAX_TIMER_MS))
  return () => clearTimeout(timer)
}

/** Run `callback` in the check phase of this event-loop turn (after the data callbacks just delivered). */
export function soon(callback: () => void): Cancel {
  const immediate = setImmediate(callback)
  return () => clearImmediate(immediate)
}

/**
 * Run `callback` once at least one full poll phase has passed: output the kernel already had for us
 * is then delivered first. From inside a poll-phase callback a single immediate would still run in
 * this turn, so hop twice.
 */
export function afterPollPhase(callback: () => void): Cancel {
  let cancelled = false
  let inner: Cancel | undefined
  const outer = soon(() => {
    if (!cancelled) inner = soon(callback)
  })
  return () => {
    cancelled = true
    outer()
    inner?.()
  }
}

/** Schedules `fire` (a timer, an immediate, a listener) and returns how to cancel it. */
export type Schedule = (fire: () => void) => Cancel

/** {@link after} as a {@link Schedule}. */
export function inMs(ms: number): Schedule {
  return (fire) => after(ms, fire)
}

/** A {@link Schedule} that fires once when `signal` aborts. */
export function onAbort(signal: AbortSignal): Schedule {
  return (fire) => {
    signal.addEventListener('abort', fire, { once: true })
    return () => signal.removeEventListener('abort', fire)
  }
}

/**
 * The callbacks one owner is waiting for, by name: each slot holds at most one (setting it cancels
 * the previous), a slot is empty again once its callback runs, and {@link PendingCallbacks.clearAll}
 * cancels every one at once, so nothing outlives its owner.
 */
export class PendingCallbacks<Slot extends string> {
  readonly #cancels = new Map<Slot, Cancel>()

  /** Schedule `callback` in `slot`, replacing whatever the slot held. */
  set(slot: Slot, schedule: Schedule, callback: () => void): void {
    this.clear(slot)
    const cancel = schedule(() => {
      this.#cancels.delete(slot)
      callback()
    })
    this.#cancels.set(slot, cancel)
  }

  /** True while `slot` holds a callback that has not run. */
  has(slot: Slot): boolean {
    return this.#cancels.has(slot)
  }

  /** Cancel what the given slots hold. */
  clear(...slots: Slot[]): void {
    for (const slot of slots) {
      this.#cancels.get(slot)?.()
      this.#cancels.delete(slot)
    }
  }

  /** Cancel everything. */
  clearAll(): void {
    for (const cancel of this.#cancels.values()) cancel()
    this.#cancels.clear()
  }
}
