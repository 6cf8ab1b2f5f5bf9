import type { ProcessInspector, ProcessRecord, SignalDisposition } from './inspector'
import type { TeardownTarget } from './teardown'
import { pollUntil } from './teardown-waits'

/** A record's disposition: the one read with it (Linux `stat`), else the platform's own read. */
export async function dispositionOf(inspector: ProcessInspector, record: ProcessRecord): Promise<SignalDisposition | undefined> {
  return record.disposition ?? (await inspector.disposition(record))
}

/**
 * The signals that may end a process gently, by its disposition: SIGTERM when it acts on it, else
 * SIGHUP (an interactive bash ignores SIGTERM but exits on SIGHUP at once); none when it ignores
 * both. Both when the disposition is unknown.
 */
export function gentleSignals(disposition: SignalDisposition | undefined): NodeJS.Signals[] {
  if (!disposition) return ['SIGTERM', 'SIGHUP']
  if (!disposition.termIgnored) return ['SIGTERM']
  return disposition.hupIgnored ? [] : ['SIGHUP']
}

/**
 * Stop the top-level process with its {@link gentleSignals}, else SIGKILL; SIGKILL after the grace.
 * Where the platform reads a record synchronously and it carries the disposition (Linux), the
 * signal goes out before the first await: an idle session's shell starts exiting in the turn of
 * the close call itself.
 * SIGHUP is re-delivered while waiting: readline checks for signals just before it blocks in
 * `pselect`, so a SIGHUP landing in between is lost until the next one (reproduced: ~6% of
 * shells HUPed right at their prompt). The PTY's exit report ends each wait the moment it comes.
 * Resolves true when the shell survived even SIGKILL.
 */
export async function stopShell(target: TeardownTarget): Promise<boolean> {
  const { inspector, shell } = target
  // No await on the common path before the signal: each would hand the turn back to the loop.
  const record = inspector.recordNow ? inspector.recordNow(shell) : await inspector.record(shell)
  if (!record || record.zombie) return false
  const gentle = gentleSignals(record.disposition ?? (await inspector.disposition(record)))
  // The PTY's exit report means node-pty reaped it: gone, no read needed. Polls cover an exit not
  // reported yet (another holder keeps the PTY open).
  let reported = false
  void target.exited.then(() => (reported = true))
  const gone = async () => reported || (await inspector.alive([shell])).length === 0
  const wait = { wake: target.exited, firstPauseMs: FIRST_POLL_MS }
  let stopped = false
  if (gentle.length > 0) {
    for (const signal of gentle) target.send(shell.pid, signal)
    if (record.stopped) target.send(shell.pid, 'SIGCONT')
    const nudge = gentle.includes('SIGHUP') ? () => target.send(shell.pid, 'SIGHUP') : undefined
    stopped = await pollUntil(gone, target.graceMs, { ...wait, nudge })
  }
  if (!stopped) {
    target.send(shell.pid, 'SIGKILL')
    stopped = await pollUntil(gone, target.killWaitMs, wait)
  }
  return !stopped
}

/** When the shell's wait first looks at /proc if the PTY did not report the exit by then (a shell exits in about 1 ms). */
const FIRST_POLL_MS = 2
