import type { Agent } from 'dsh-agent'
import type { JobContext, JobHandle, JobInfo, JobOutcome, StartJobOptions } from 'dsh-jobs'
import type { TerminalSendHandle, TerminalSessionId, TerminalSessionService, TerminalTextSend } from 'dsh-terminal'
import type { BackgroundHolders } from './background-holders'
import { EARLIER_MARKER } from './render/result-fit'
import { backgroundDetail } from './render/texts'

/** Job kind of a background send: its ids read `pty-send-<n>`. */
export const BACKGROUND_JOB_KIND = 'pty-send'

/** The part of `ctx.jobs` a background send uses, so any provider of the seam will do. */
export interface JobStarter {
  start(options: StartJobOptions): string
  /** Take over the jobs detached with a session (absent from a provider that never detaches jobs). */
  adopt?(key: string, owner: Agent): JobInfo[]
}

/** Everything one background send needs; `outputLimitBytes` is the tool's `maxResultBytes`. */
export interface BackgroundSendOptions {
  jobs: JobStarter
  terminals: TerminalSessionService
  owner: Agent
  sessionId: TerminalSessionId
  /** What to type, and how to wait: `waitFor` ends the job on a matching line, `idleMs` lets silence end it. */
  request: Pick<TerminalTextSend, 'text' | 'submit' | 'waitFor' | 'idleMs'>
  /** Absolute bound of the send (the call's `timeoutMs`, else the tool's `backgroundTimeoutMs`). */
  timeoutMs: number
  outputLimitBytes: number
  /** Told which job holds the session until its send ends, so a refused send can name it. */
  holders: BackgroundHolders
  /** The tool call that asked for it, named to session observers (recordings). */
  callId?: string
}

/**
 * Register a send as a job and return its id. Control is already back with the model, so the send
 * does not settle on silence (unless the model gave `idleMs`): it runs until the shell or a program
 * waits for input, a line matches `waitFor`, the session exits, the job is killed, or `timeoutMs`
 * passed (a server it started keeps its job `running`). The send starts inside `run`, synchronously, so a
 * refused send (SEND_ACTIVE, a foreign or unknown session) throws out of `start` and leaves no job;
 * a job refused by the registry (JOB_LIMIT) never reaches `run`, so nothing is written.
 */
export function startBackgroundSend(options: BackgroundSendOptions): string {
  const { jobs, terminals, owner, sessionId, request } = options
  let settled: Promise<unknown> | undefined
  const jobId = jobs.start({
    kind: BACKGROUND_JOB_KIND,
    label: `${sessionId}: ${request.text}`,
    owner,
    outputLimitBytes: options.outputLimitBytes,
    // Where a disconnect detaches the session instead of closing it, the job goes on with it, for the adopter.
    detach: { key: sessionId, keep: () => terminals.keepsDetached },
    run: (job) => {
      const send = terminals.startSend(owner, sessionId, {
        text: request.text,
        submit: request.submit,
        // An explicit idleMs is the model asking for the silence rule; otherwise silence proves nothing here.
        ...(request.idleMs === undefined ? { settleOnSilence: false } : { idleMs: request.idleMs }),
        timeoutMs: options.timeoutMs,
        ...(request.waitFor === undefined ? {} : { waitFor: request.waitFor }),
        ...(options.callId === undefined ? {} : { callId: options.callId }),
        outlivesOwner: true,
      })
      settled = send.released
      return sendAsJob(send, job, sessionId)
    },
  })
  if (settled) options.holders.hold(sessionId, jobId, settled)
  return jobId
}

/**
 * Adapt a running send to a job handle. `cancel` is the send's own cancel, i.e. a real SIGINT to the
 * foreground group; the job registry then reports `killed`. Output is pulled as deltas while the
 * send runs; at settlement the viewport is the part no delta consumed, so it is written to the job
 * before `done` resolves, and its loss, too, reaches the status detail. Earlier output (printed
 * between the previous result and this send) opens the transcript, under its marker: at once when the
 * backend tells it at the start (`send.earlier`), else at settlement. What the result's earlier output
 * adds to it (a running command's output that typed-ahead input waited behind) follows the deltas.
 */
function sendAsJob(send: TerminalSendHandle, job: JobContext, sessionId: TerminalSessionId): JobHandle {
  let lostBytes = false
  let interrupted = false
  const known = send.earlier
  if (known?.output) job.write(earlierText(known.output))
  if (known?.truncated) lostBytes = true
  const readOutput = () => {
    const read = send.readOutput()
    if (read.truncated) lostBytes = true
    return read.delta
  }
  const done = send.done.then((result): JobOutcome => {
    const earlier = result.earlierOutput
    if (earlier && known === undefined) job.write(earlierText(earlier))
    else if (earlier && known && earlier.startsWith(known.output)) job.write(earlier.slice(known.output.length))
    job.write(result.viewport)
    if (result.truncated || result.earlierTruncated) lostBytes = true
    const facts = backgroundDetail(result, lostBytes, sessionId)
    return { detail: interrupted ? `interrupted with SIGINT; ${facts}` : facts }
  })
  return {
    cancel: () => {
      if (send.cancel()) interrupted = true
    },
    done,
    readOutput,
  }
}

/** Earlier output as a transcript shows it: on a line of its own after its marker, ending with a newline. */
function earlierText(earlier: string): string {
  return `\n${EARLIER_MARKER}\n${earlier.endsWith('\n') ? earlier : `${earlier}\n`}`
}
