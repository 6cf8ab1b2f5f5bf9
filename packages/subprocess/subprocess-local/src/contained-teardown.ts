import { setTimeout as sleep } from 'node:timers/promises'
import { TerminalCleanupError } from 'dsh-subprocess'
import type { ProcessIdentity } from './inspector'
import { dispositionOf, stopShell } from './shell-stop'
import type { TeardownTarget } from './teardown'
import { pollUntil, waitGone } from './teardown-waits'

/** Who is inside a session's cgroups: what teardown proves quiescence with. */
export interface Containment {
  /** Pids listed in the session's cgroups now (exited processes, zombies included, are not); `undefined` when unreadable. */
  members(): number[] | undefined
  /**
   * Tasks the session's cgroups charge now (threads and zombies included), where a counter can be
   * read in one syscall (the pids controller); `undefined` otherwise. Lets the common case skip the listing.
   */
  tasks?(): number | undefined
}

/** How a contained teardown ended when it did not throw. */
export type ContainedOutcome = 'quiescent' | 'unreadable'

/**
 * Teardown of a session whose every process is listed in its cgroups (the top-level process joined
 * them before it could fork): the listing replaces the /proc walks and session sweeps, and an empty
 * cgroup after the shell's exit is the proof that nothing of the session survived. Members get their
 * signals before the shell, but the shell waits only for those that can use the grace (a TERM
 * handler). The cgroups are the session here: a process that moved itself out (root only) is not
 * looked for. `unreadable` when a listing failed: the caller then tears down by walking /proc.
 * Rejects with `TerminalCleanupError` naming the survivors.
 */
export async function teardownContained(target: TeardownTarget, containment: Containment): Promise<ContainedOutcome> {
  // A single task charged is the shell (or its zombie): nobody else to stop first.
  const before = containment.tasks?.() === 1 ? [] : othersListed(target, containment)
  if (before === undefined) return 'unreadable'
  const signalled = new Set<number>(before)
  const seen: Listings = { latest: [] }
  if (before.length > 0) {
    const handlers = await signalMembers(target, containment, before, seen)
    if (handlers === undefined) return 'unreadable'
    // Only a TERM handler can use the grace; then whatever is still inside goes before the shell does.
    if (handlers.length > 0 && (await stopRemaining(target, containment, handlers, seen)) === undefined) return 'unreadable'
  }
  const shellSurvived = await stopShell(target)
  // Nothing charged at all, not even a zombie, is the proof in one read; so is finding a zombie for
  // every task still charged. Otherwise the listing decides.
  const charged = shellSurvived ? undefined : containment.tasks?.()
  const settled = charged === 0 || (charged !== undefined && (await onlyZombies(target, new Set([...seen.latest, ...signalled]), charged, true)))
  const after = settled ? [] : othersListed(target, containment)
  if (after === undefined) return 'unreadable'
  if (after.length > 0) seen.latest = after
  let survivors: number[] | undefined = []
  if (after.length > 0) {
    // What the shell forked while exiting gets its TERM (and grace) now; what was signalled already, SIGKILL.
    const handlers = await signalMembers(
      target,
      containment,
      after.filter((pid) => !signalled.has(pid)),
      seen,
    )
    survivors = handlers && (await stopRemaining(target, containment, handlers, seen))
  }
  if (survivors === undefined) return 'unreadable'
  if (shellSurvived) survivors.unshift(target.shell.pid)
  if (survivors.length > 0) throw new TerminalCleanupError(survivors)
  // The last ones seen listed are the likeliest to be still exiting: looked at first.
  if (!settled) await finishedExiting(target, containment, new Set([...seen.latest, ...after, ...signalled]))
  await target.exited
  return 'quiescent'
}

/**
 * A process leaves the listing as it starts exiting, a moment before it is a zombie: wait (up to
 * `killWaitMs`, woken by the PTY's exit report) until every member that was signalled is a zombie
 * or gone. Nothing charged to the cgroups at all says so in one read. Whatever still runs then is
 * past the point of no return, or a stranger that took a freed pid: neither is a survivor.
 */
async function finishedExiting(target: TeardownTarget, containment: Containment, signalled: ReadonlySet<number>): Promise<void> {
  const pending = new Set(signalled)
  if (pending.size === 0) return
  await pollUntil(
    async () => {
      const charged = containment.tasks?.()
      return charged === 0 || (await onlyZombies(target, pending, charged, false))
    },
    target.killWaitMs,
    { wake: target.exited },
  )
}

/**
 * Read `candidates` in order: false at the first one still running; true once as many zombies as
 * tasks are `charged` (then nothing charged can be running). When the candidates run out first, the
 * answer is true where only the candidates matter, false where every charged task has to be
 * accounted for (`accountForAll`). A candidate found gone is dropped from the set, so a later poll skips it.
 */
async function onlyZombies(target: TeardownTarget, candidates: Set<number>, charged: number | undefined, accountForAll: boolean): Promise<boolean> {
  let zombies = 0
  for (const pid of candidates) {
    const record = await target.inspector.identify(pid)
    if (record && !record.zombie) return false
    if (!record) candidates.delete(pid)
    else if (charged !== undefined && ++zombies >= charged) return true
  }
  return !accountForAll
}

/**
 * How long SIGTERMed members get to die before teardown reads what is left. A member without a
 * handler dies on delivery, and its stat need not be read at all; what is still listed afterwards
 * (a TERM-ignorer, a handler, a stopped process) is read and handled. Any value is correct: it only
 * decides how many stats are read.
 */
const TERM_SETTLE_MS = 1

/**
 * SIGTERM every pid at once, the highest pid first (a child is younger than its parent unless pids
 * wrapped); after {@link TERM_SETTLE_MS}, read the stat of each one still listed: SIGKILL for one
 * that ignores or blocks SIGTERM, SIGCONT for one that is stopped. Resolves the members with a TERM
 * handler (or an unknown disposition), which may use the grace.
 */
async function signalMembers(
  target: TeardownTarget,
  containment: Containment,
  pids: readonly number[],
  seen: Listings,
): Promise<ProcessIdentity[] | undefined> {
  if (pids.length === 0) return []
  const ordered = [...pids].sort((left, right) => right - left)
  for (const pid of ordered) target.send(pid, 'SIGTERM')
  await sleep(TERM_SETTLE_MS)
  const listed = othersListed(target, containment)
  if (listed === undefined) return undefined
  if (listed.length > 0) seen.latest = listed
  const still = new Set(listed)
  const handlers: ProcessIdentity[] = []
  for (const pid of ordered) {
    if (!still.has(pid)) continue
    // Listed a moment ago: membership is the identity; the record gives the state and dispositions.
    const record = await target.inspector.identify(pid)
    if (!record || record.zombie) continue
    const disposition = await dispositionOf(target.inspector, record)
    if (disposition?.termIgnored) {
      target.send(pid, 'SIGKILL')
      continue
    }
    if (record.stopped) target.send(pid, 'SIGCONT')
    if (disposition?.termHandled !== false) handlers.push(record)
  }
  return handlers
}

/**
 * Give `handlers` up to the grace to leave, then SIGKILL everything still listed but the shell
 * (forks made meanwhile included) and wait up to `killWaitMs` for the listing to empty; the PTY's
 * exit report wakes the wait (its last holders are gone). Resolves the pids still there.
 */
async function stopRemaining(
  target: TeardownTarget,
  containment: Containment,
  handlers: readonly ProcessIdentity[],
  seen: Listings,
): Promise<number[] | undefined> {
  if (handlers.length > 0) await waitGone(target.inspector, handlers, target.graceMs)
  let remaining = othersListed(target, containment)
  if (remaining === undefined || remaining.length === 0) return remaining
  seen.latest = remaining
  for (const pid of [...remaining].sort((left, right) => right - left)) target.send(pid, 'SIGKILL')
  await pollUntil(
    () => {
      remaining = othersListed(target, containment)
      return remaining === undefined || remaining.length === 0
    },
    target.killWaitMs,
    { wake: target.exited },
  )
  return remaining
}

/** The last non-empty listing teardown read (what may still be exiting when the listing is empty). */
interface Listings {
  latest: number[]
}

/** The listed pids but the shell's (one small read per hierarchy); `undefined` when a listing cannot be read. */
function othersListed(target: TeardownTarget, containment: Containment): number[] | undefined {
  return containment.members()?.filter((pid) => pid !== target.shell.pid)
}
