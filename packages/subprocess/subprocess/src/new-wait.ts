import { isStdinWaitProven } from './stdin-wait-proof'
import type { ForegroundFacts, StdinWait, ThreadSample } from './types'

/**
 * True when `after` proves a stdin wait that began after `before` was sampled: the foreground
 * group changed, or a waiting thread was doing something else in `before` (running, another
 * syscall, absent from a complete sample) or has run since (its context-switch counters grew).
 * Anything it cannot decide — no `before`, an unknown earlier state — is `false`, never a guess.
 *
 * Take `before` immediately before writing input and `after` once output followed the write:
 * a thread still blocked in the very wait it was in before has not seen the input.
 */
export function isNewWait(before: ForegroundFacts | undefined, after: ForegroundFacts | undefined): boolean {
  if (!after || !isStdinWaitProven(after) || !before) return false
  if (before.processGroupId !== after.processGroupId) return true
  return after.waits.some((wait) => waitIsNew(before, wait))
}

function waitIsNew(before: ForegroundFacts, wait: StdinWait): boolean {
  const earlier = before.threads.find((thread) => sameThread(thread, wait))
  if (!earlier) return before.complete
  switch (earlier.state) {
    case 'running':
      return true
    case 'unknown':
      return false
    case 'blocked':
    case 'stdin-wait':
      if (earlier.syscall === undefined) return false
      if (earlier.syscall !== wait.syscall) return true
      return ranSince(earlier, wait)
  }
}

function sameThread(a: ThreadSample, b: ThreadSample): boolean {
  return a.pid === b.pid && a.tid === b.tid && a.started === b.started
}

/** The kernel bumps a thread's switch counters each time it blocks or is preempted, so growth means it ran. */
function ranSince(earlier: ThreadSample, later: StdinWait): boolean {
  if (earlier.voluntaryCtxtSwitches === undefined || earlier.nonvoluntaryCtxtSwitches === undefined) return false
  return later.voluntaryCtxtSwitches > earlier.voluntaryCtxtSwitches || later.nonvoluntaryCtxtSwitches > earlier.nonvoluntaryCtxtSwitches
}
