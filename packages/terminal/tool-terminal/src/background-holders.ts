import type { TerminalSessionId } from 'dsh-terminal'
import { ToolError } from 'dsh-tools'

/**
 * Which background job holds each session, while its send runs. A send refused because the
 * session is busy can then name the job to follow or stop, instead of leaving the model to guess.
 */
export class BackgroundHolders {
  readonly #jobs = new Map<TerminalSessionId, string>()

  /** `jobId` holds `sessionId` until `settled` (the send's end) resolves or rejects. */
  hold(sessionId: TerminalSessionId, jobId: string, settled: Promise<unknown>): void {
    this.#jobs.set(sessionId, jobId)
    const release = () => {
      if (this.#jobs.get(sessionId) === jobId) this.#jobs.delete(sessionId)
    }
    settled.then(release, release)
  }

  /** The background job whose send holds `sessionId`, if any. */
  holder(sessionId: TerminalSessionId): string | undefined {
    return this.#jobs.get(sessionId)
  }
}

/**
 * What to throw for `error`, an error a send's start threw: a SEND_ACTIVE refusal becomes one with the
 * same code and a message that says what holds the session and what to do about it; every other
 * error is itself. Called from the caller's own `catch`, so a send that starts costs no closure.
 */
export function explainBusy(holders: BackgroundHolders, sessionId: TerminalSessionId, error: unknown): unknown {
  if ((error as { code?: unknown } | undefined)?.code !== 'SEND_ACTIVE') return error
  const jobId = holders.holder(sessionId)
  const message = jobId
    ? `PTY session ${sessionId} is busy: background job ${jobId} holds it until its send ends (it may be running or being interrupted). ` +
      `Follow it with job_output or stop it with job_kill, then send again.`
    : `PTY session ${sessionId} is busy: an earlier send on it has not finished (another terminal_send still waiting, ` +
      `or one being interrupted). Wait for it, then send again; terminal_signal SIGINT interrupts what runs in front.`
  return new ToolError('SEND_ACTIVE', message, { cause: error })
}
