import { setTimeout as sleep } from 'node:timers/promises'
import { TerminalCleanupError } from 'dsh-subprocess'
import type { MemberScope, ProcessIdentity, ProcessInspector, ProcessRecord } from './inspector'
import { ownsTerminal } from './ownership'
import type { Tracker } from './tracker'

/** Delivers a signal to one pid; must not throw for a process that is already gone. */
export type SignalSender = (pid: number, signal: NodeJS.Signals) => void

/** Everything teardown needs to know about one terminal session. */
export interface TeardownTarget {
  /** Platform reads. */
  readonly inspector: ProcessInspector
  /** The top-level process. */
  readonly shell: ProcessIdentity
  /** Descendants seen so far; teardown adds what it finds. */
  readonly tracker: Tracker
  /** Time a process that handles SIGTERM gets before SIGKILL. */
  readonly graceMs: number
  /** Time SIGKILLed processes get to leave the process table before they count as survivors. */
  readonly killWaitMs: number
  /** True while the PTY is open, so holders of its device can still be attributed to it. */
  readonly ptyOpen: () => boolean
  /** Resolves once the PTY reported the top-level process's exit. */
  readonly exited: Promise<unknown>
  /** Signal delivery (`process.kill` in production). */
  readonly send: SignalSender
  /** Top-level pids of the host's other live terminals, which scans skip (see `MemberScope`). */
  readonly otherTerminals?: () => ReadonlySet<number>
}

/**
 * Make a session quiescent: stop the descendants (children first), then the shell, then whatever
 * the shell left behind while it exited, and wait for the PTY's exit report. Grace is spent only
 * on processes that can use it. Rejects with `TerminalCleanupError` naming the survivors.
 */
export async function teardown(target: TeardownTarget): Promise<void> {
  const shellRecord = await target.inspector.record(target.shell)
  // Only a child that already ran setsid() names the PTY; before that its stat shows the host's
  // terminal, and adopting that terminal's holders would stop the host's own processes.
  if (shellRecord?.ttyNr && ownsTerminal(shellRecord)) target.tracker.terminalDevice ??= shellRecord.ttyNr
  const suspects = new Map<number, ProcessIdentity>()
  await stopMembers(target, suspects)
  const shellSurvived = await stopShell(target)
  await stopMembers(target, suspects)
  const survivors = await target.inspector.alive([...suspects.values()])
  if (shellSurvived) survivors.unshift(target.shell)
  if (survivors.length > 0) throw new TerminalCleanupError(survivors.map((survivor) => survivor.pid))
  await target.exited
}

/** The synchronous last resort for host exit: SIGKILL every member, then the shell. */
export function killSync(target: TeardownTarget): void {
  const scan = target.inspector.membersSync(scope(target))
  const known = new Map<number, ProcessIdentity>(target.tracker.list().map((identity) => [identity.pid, identity]))
  for (const member of scan.members) known.set(member.pid, member)
  for (const member of target.inspector.aliveSync([...known.values()])) target.send(member.pid, 'SIGKILL')
  if (target.inspector.aliveSync([target.shell]).length > 0) target.send(target.shell.pid, 'SIGKILL')
}

/**
 * TERM every member (SIGKILL at once for one that ignores or blocks SIGTERM), wait up to the
 * grace for them to leave, rescan for processes forked meanwhile, SIGKILL the union, verify.
 */
async function stopMembers(target: TeardownTarget, suspects: Map<number, ProcessIdentity>): Promise<void> {
  const first = await scan(target)
  if (first.length === 0) return
  const terminated: ProcessRecord[] = []
  for (const member of first) {
    const disposition = await target.inspector.disposition(member)
    if (disposition?.termIgnored) {
      target.send(member.pid, 'SIGKILL')
      continue
    }
    target.send(member.pid, 'SIGTERM')
    if (member.stopped) target.send(member.pid, 'SIGCONT')
    terminated.push(member)
  }
  if (terminated.length > 0) await waitGone(target.inspector, terminated, target.graceMs)
  const second = await scan(target)
  const union = new Map<number, ProcessIdentity>()
  for (const member of [...first, ...second]) union.set(member.pid, { pid: member.pid, started: member.started })
  const living = await target.inspector.alive([...union.values()])
  for (const member of living) target.send(member.pid, 'SIGKILL')
  const left = await waitGone(target.inspector, living, target.killWaitMs)
  const leftPids = new Set(left.map((identity) => identity.pid))
  target.tracker.forget([...union.values()].filter((identity) => !leftPids.has(identity.pid)))
  for (const survivor of left) suspects.set(survivor.pid, survivor)
}

/**
 * Stop the top-level process: SIGTERM when it acts on it, else SIGHUP (an interactive bash
 * ignores SIGTERM but exits on SIGHUP at once), else SIGKILL; SIGKILL after the grace.
 * SIGHUP is re-delivered while waiting: readline checks for signals just before it blocks in
 * `pselect`, so a SIGHUP landing in between is lost until the next one (reproduced: ~6% of
 * shells HUPed right at their prompt). Resolves true when the shell survived even SIGKILL.
 */
async function stopShell(target: TeardownTarget): Promise<boolean> {
  const { inspector, shell } = target
  const record = await inspector.record(shell)
  if (!record || record.zombie) return false
  const disposition = await inspector.disposition(shell)
  const gentle: NodeJS.Signals[] = !disposition ? ['SIGTERM', 'SIGHUP'] : !disposition.termIgnored ? ['SIGTERM'] : !disposition.hupIgnored ? ['SIGHUP'] : []
  let left: ProcessIdentity[] = [shell]
  if (gentle.length > 0) {
    for (const signal of gentle) target.send(shell.pid, signal)
    if (record.stopped) target.send(shell.pid, 'SIGCONT')
    const nudge = gentle.includes('SIGHUP') ? () => target.send(shell.pid, 'SIGHUP') : undefined
    left = await waitGone(inspector, [shell], target.graceMs, nudge)
  }
  if (left.length > 0) {
    target.send(shell.pid, 'SIGKILL')
    left = await waitGone(inspector, [shell], target.killWaitMs)
  }
  return left.length > 0
}

async function scan(target: TeardownTarget): Promise<readonly ProcessRecord[]> {
  const result = await target.inspector.members(scope(target))
  if (result.shellGoneTick !== undefined) target.tracker.shellGoneTick ??= result.shellGoneTick
  target.tracker.remember(result.members)
  return result.members
}

function scope(target: TeardownTarget): MemberScope {
  return {
    shell: target.shell,
    tracked: target.tracker.list(),
    thorough: true,
    terminalDevice: target.ptyOpen() ? target.tracker.terminalDevice : undefined,
    shellGoneTick: target.tracker.shellGoneTick,
    otherTerminals: target.otherTerminals?.(),
  }
}

/**
 * Poll (1, 2, 4 … 20 ms apart) until none of `identities` is alive or `timeoutMs` passed;
 * resolves the living. `nudge` runs 10, 20, 40 … ms into the wait (at most every 500 ms).
 */
export async function waitGone(
  inspector: ProcessInspector,
  identities: readonly ProcessIdentity[],
  timeoutMs: number,
  nudge?: () => void,
): Promise<ProcessIdentity[]> {
  const start = performance.now()
  const deadline = start + timeoutMs
  let delay = 1
  let nudgeAfter = 10
  for (;;) {
    const living = await inspector.alive(identities)
    const now = performance.now()
    if (living.length === 0 || now >= deadline) return living
    if (nudge && now - start >= nudgeAfter) {
      nudge()
      nudgeAfter += Math.min(nudgeAfter, 500)
    }
    await sleep(Math.min(delay, deadline - now))
    delay = Math.min(delay * 2, 20)
  }
}
