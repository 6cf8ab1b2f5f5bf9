import type { SendSession } from './send-contract'
import type { SendEvent } from './send-transitions'
import { after, type Cancel } from './timers'

/** What the interrupt of one send works with: its session, its write (if one is in flight) and the table it reports to. */
export interface InterruptTarget {
  readonly session: SendSession
  /** The send's write, when it started one. */
  readonly write: Promise<void> | undefined
  readonly cancelGraceMs: number
  /** From here on the send's buffer takes output (a send cancelled before it wrote had none open). */
  openOutput(): void
  /** Report one event to the send's table (which may ignore it: the send moved on meanwhile). */
  report(event: SendEvent): void
}

/**
 * A cancelled send's interrupt: a write in flight may land first (for at most `cancelGraceMs`),
 * then the foreground is sampled (`interrupt-ready`: the new baseline), then a real SIGINT goes
 * to the foreground group (`signalled`). The session exiting or closing meanwhile ends it (`exit`).
 * A SIGINT swallowed between a job's fork and its exec is the provider's to prevent or repeat.
 */
export async function interruptForeground(target: InterruptTarget, writeInFlight: boolean): Promise<void> {
  const { session, write } = target
  if (writeInFlight && write) {
    let stop: Cancel | undefined
    await Promise.race([write.catch(() => undefined), new Promise<void>((resolve) => (stop = after(target.cancelGraceMs, resolve)))])
    stop?.()
  }
  target.openOutput()
  if (session.exited() || session.closing()) return target.report({ kind: 'exit' })
  const before = await session.inspectForeground().catch(() => undefined)
  if (session.exited() || session.closing()) return target.report({ kind: 'exit' })
  target.report({ kind: 'interrupt-ready', before })
  try {
    await session.signalForeground('SIGINT')
  } catch {
    // No foreground group (the shell is going away) or a refusal: the grace or the exit settles the send.
    return
  }
  target.report({ kind: 'signalled' })
}
