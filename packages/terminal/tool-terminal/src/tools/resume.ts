import type { Agent } from 'dsh-agent'
import type { ToolOutput } from 'dsh-tools'
import { resumeLayout } from '../render/texts'
import { sendResultMeta, settleOrCancel } from './send'
import { fittedOutput, toSessionId, type ToolDeps } from './tool-parts'

/**
 * terminal_open with `resume`: adopt a detached session (first caller wins, another gets
 * SESSION_ADOPTED), then wait as an empty send does, so the result is the output produced since
 * the last result delivered for it, in the usual window, with the wait, exit and input lines.
 */
export async function resumeSession(
  { terminals, config }: ToolDeps,
  owner: Agent,
  request: { type: string; resume: string },
  signal: AbortSignal,
  callId: string,
): Promise<ToolOutput> {
  const sessionId = toSessionId(request.resume)
  const snapshot = await terminals.resume(owner, sessionId, request.type)
  const handle = terminals.startSend(owner, sessionId, { text: '', submit: false, signal, callId })
  const result = await settleOrCancel(handle, signal, sessionId)
  const meta: Record<string, unknown> = { sessionId, type: snapshot.type, resumed: true, ...sendResultMeta(result) }
  if (snapshot.name !== undefined) meta.name = snapshot.name
  if (snapshot.pid !== undefined) meta.pid = snapshot.pid
  const back = { sessionId, windowBytes: config.defaultMaxBytes, maxResultBytes: config.maxResultBytes }
  return fittedOutput(resumeLayout(snapshot, result, back), config.defaultMaxBytes, meta, { foldRepeats: config.foldRepeatedLines })
}
