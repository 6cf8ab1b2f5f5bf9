import type { ToolExecuteRequest, ToolKind, ToolPresentation, ToolResult, ToolService } from 'dsh-tools'

/** ACP tool call status values this projection emits. */
export type AcpToolCallStatus = 'in_progress' | 'completed' | 'failed'

/** ACP `ToolCallContent` of kind `content` holding one text block. */
export interface AcpTextToolContent {
  type: 'content'
  content: { type: 'text'; text: string }
}

/** The fields of an ACP `tool_call` / `tool_call_update` this projection fills (never `locations`). */
export interface AcpToolCallFields {
  toolCallId: string
  title: string
  kind: ToolKind
  status: AcpToolCallStatus
  content: AcpTextToolContent[]
  rawInput?: unknown
}

/** An ACP `SessionUpdate` announcing a tool call or reporting its result. */
export type AcpToolCallUpdate = ({ sessionUpdate: 'tool_call' } & AcpToolCallFields) | ({ sessionUpdate: 'tool_call_update' } & AcpToolCallFields)

/** The params of an ACP `session/update` notification. */
export interface AcpSessionNotification {
  sessionId: string
  update: AcpToolCallUpdate
}

/** A complete JSON-RPC `session/update` notification, as an ACP agent writes it to its client. */
export interface AcpNotificationMessage {
  jsonrpc: '2.0'
  method: 'session/update'
  params: AcpSessionNotification
}

/**
 * `tool_call`: announces a call before it runs, from the per-call presentation (`describeCall`):
 * title, kind and rawInput, status `in_progress` (the host runs it at once), no content yet.
 */
export function toolCallStarted(sessionId: string, toolCallId: string, presentation: ToolPresentation): AcpSessionNotification {
  return { sessionId, update: { sessionUpdate: 'tool_call', ...fields(toolCallId, presentation, 'in_progress', []) } }
}

/**
 * `tool_call_update`: the finished call, from the per-result presentation: `completed`, or `failed`
 * for an error result, with the result's text blocks as content.
 */
export function toolCallFinished(sessionId: string, result: ToolResult): AcpSessionNotification {
  const content = result.content.map((block): AcpTextToolContent => ({ type: 'content', content: { type: 'text', text: block.text } }))
  const status = result.isError ? 'failed' : 'completed'
  return { sessionId, update: { sessionUpdate: 'tool_call_update', ...fields(result.callId, result.presentation, status, content) } }
}

/** Wrap notification params as the JSON-RPC message an ACP client receives. */
export function toNotificationMessage(params: AcpSessionNotification): AcpNotificationMessage {
  return { jsonrpc: '2.0', method: 'session/update', params }
}

/**
 * Run one call through `ctx.tools` and project it: `tool_call` before it runs, `tool_call_update`
 * once it finished (errors included; `execute` never rejects). Returns the tool result.
 */
export async function executeProjected(
  tools: Pick<ToolService, 'describeCall' | 'execute'>,
  sessionId: string,
  request: ToolExecuteRequest,
  emit: (notification: AcpSessionNotification) => void,
): Promise<ToolResult> {
  emit(toolCallStarted(sessionId, request.callId, tools.describeCall(request)))
  const result = await tools.execute(request)
  emit(toolCallFinished(sessionId, result))
  return result
}

function fields(toolCallId: string, presentation: ToolPresentation, status: AcpToolCallStatus, content: AcpTextToolContent[]): AcpToolCallFields {
  const projected: AcpToolCallFields = { toolCallId, title: presentation.title, kind: presentation.kind, status, content }
  if (presentation.rawInput !== undefined) projected.rawInput = presentation.rawInput
  return projected
}
