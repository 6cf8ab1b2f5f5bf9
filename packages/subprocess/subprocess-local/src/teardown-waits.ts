import { setTimeout as sleep } from 'node:timers/promises'
import type { ProcessIdentity, ProcessInspector } from './inspector'

/** What can end a teardown wait early besides its own check. */
export interface WaitOptions {
  /** Cuts the current pause short once it settles (the PTY's exit report): the exit is seen when it happens. */
  readonly wake?: Promise<unknown> | undefined
  /** Runs 10, 20, 40 … ms into the wait (at most every 500 ms apart): re-sends a signal that can be lost. */
  readonly nudge?: (() => void) | undefined
  /**
   * Pause this long before the first check (cut short by `wake`): for a wait that `wake` normally
   * ends, so the common case costs no read at all (default: check at once).
   */
  readonly firstPauseMs?: number | undefined
}

/**
 * Check `done` at once, then 1, 2, 4 … 20 ms apart until it holds or `timeoutMs` passed; resolves
 * whether it held. A pause ends early when `wake` settles (once: after that the pauses are plain).
 */
export async function pollUntil(done: () => boolean | Promise<boolean>, timeoutMs: number, options: WaitOptions = {}): Promise<boolean> {
  const start = performance.now()
  const deadline = start + timeoutMs
  let wake = options.wake
  void wake?.then(
    () => (wake = undefined),
    () => (wake = undefined),
  )
  let delay = 1
  let nudgeAfter = 10
  if (options.firstPauseMs !== undefined) await pauseOrWake(Math.min(options.firstPauseMs, timeoutMs), wake)
  for (;;) {
    if (await done()) return true
    const now = performance.now()
    if (now >= deadline) return false
    if (options.nudge && now - start >= nudgeAfter) {
      options.nudge()
      nudgeAfter += Math.min(nudgeAfter, 500)
    }
    await pauseOrWake(Math.min(delay, deadline - now), wake)
    delay = Math.min(delay * 2, 20)
  }
}

function pauseOrWake(ms: number, wake: Promise<unknown> | undefined): Promise<unknown> {
  const pause = sleep(ms)
  return wake ? Promise.race([pause, wake]) : pause
}

/** Poll (see {@link pollUntil}) until none of `identities` is alive or `timeoutMs` passed; resolves the living. */
export async function waitGone(
  inspector: ProcessInspector,
  identities: readonly ProcessIdentity[],
  timeoutMs: number,
  options: WaitOptions = {},
): Promise<ProcessIdentity[]> {
  let living: ProcessIdentity[] = [...identities]
  await pollUntil(
    async () => {
      living = await inspector.alive(living)
      return living.length === 0
    },
    timeoutMs,
    options,
  )
  return living
}
