import type { Agent } from 'dsh-agent'
import type { TerminalSendHandle } from 'dsh-terminal'
import type { ToolOutput } from 'dsh-tools'
import type { JobStarter } from '../background'
import { resumeHeldLayout, resumeLayout } from '../render/texts'
import { sendResultMeta, settleOrCancel } from './send'
import { fittedOutput, toSessionId, type ToolDeps } from './tool-parts'

/**
 * terminal_open with `resume`: adopt a detached session (first caller wins, another gets
 * SESSION_ADOPTED), then wait as an empty send does, so the result is the output produced since
 * the last result delivered for it, in the usual window, with the wait, exit and input lines.
 */
export async function resumeSession(
  { ctx, terminals, config, holders }: ToolDeps,
  owner: Agent,
  request: { type: string; resume: string },
  signal: AbortSignal,
  callId: string,
): Promise<ToolOutput> {
  const sessionId = toSessionId(request.resume)
  const snapshot = await terminals.resume(owner, sessionId, request.type)
  // Background jobs kept with the session (their send went on through the detachment) are the adopter's now.
  const jobs = (ctx.get('jobs') as JobStarter | undefined)?.adopt?.(sessionId, owner) ?? []
  let handle: TerminalSendHandle
  try {
    handle = terminals.startSend(owner, sessionId, { text: '', submit: false, signal, callId })
  } catch (error) {
    // The job whose send holds the session, as the send tool names it; else the adopted job still running.
    const holder = holders.holder(sessionId) ?? jobs.find((job) => job.status === 'running')?.id
    if ((error as { code?: unknown }).code !== 'SEND_ACTIVE' || holder === undefined) throw error
    // Its job's send holds the session and delivers the output: the resume has no result of its own.
    const meta: Record<string, unknown> = { sessionId, type: snapshot.type, resumed: true, jobs: jobs.map((job) => job.id) }
    if (snapshot.name !== undefined) meta.name = snapshot.name
    if (snapshot.pid !== undefined) meta.pid = snapshot.pid
    return fittedOutput(resumeHeldLayout(snapshot, holder), config.defaultMaxBytes, meta)
  }
  const result = await settleOrCancel(handle, signal, sessionId)
  const meta: Record<string, unknown> = { sessionId, type: snapshot.type, resumed: true, ...sendResultMeta(result) }
  if (snapshot.name !== undefined) meta.name = snapshot.name
  if (snapshot.pid !== undefined) meta.pid = snapshot.pid
  if (jobs.length) meta.jobs = jobs.map((job) => job.id)
  const back = { sessionId, windowBytes: config.defaultMaxBytes, maxResultBytes: config.maxResultBytes }
  return fittedOutput(resumeLayout(snapshot, result, back), config.defaultMaxBytes, meta, { foldRepeats: config.foldRepeatedLines })
}
