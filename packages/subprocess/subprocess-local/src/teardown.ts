import { TerminalCleanupError } from 'dsh-subprocess'
import { type Containment, teardownContained } from './contained-teardown'
import type { MemberScope, ProcessIdentity, ProcessInspector, ProcessRecord } from './inspector'
import { ownsTerminal } from './ownership'
import { dispositionOf, stopShell } from './shell-stop'
import { waitGone } from './teardown-waits'
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
  /** The session's cgroups, once the top-level process joined them: their listing replaces the /proc walks. */
  readonly containment?: Containment | undefined
}

/**
 * Make a session quiescent: stop the descendants (children first), then the shell, then whatever
 * the shell left behind while it exited, and wait for the PTY's exit report. Grace is spent only
 * on processes that can use it. A session in cgroups is proven quiescent by their listing (see
 * `teardownContained`); otherwise by walking /proc. Rejects with `TerminalCleanupError` naming the survivors.
 */
export async function teardown(target: TeardownTarget): Promise<TeardownProof> {
  if (target.containment && (await teardownContained(target, target.containment)) === 'quiescent') return 'cgroup'
  await teardownByScans(target)
  return 'scan'
}

/** What proved a session quiescent: its cgroups' listing, or the /proc scans (which cannot see a process that left both session and terminal). */
export type TeardownProof = 'cgroup' | 'scan'

/** The /proc teardown: tree walks, tracked descendants, session members and holders of the PTY. */
async function teardownByScans(target: TeardownTarget): Promise<void> {
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
    const disposition = await dispositionOf(target.inspector, member)
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
