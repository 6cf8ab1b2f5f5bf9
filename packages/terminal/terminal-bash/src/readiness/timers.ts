import { MAX_TIMER_MS } from '../config'

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
