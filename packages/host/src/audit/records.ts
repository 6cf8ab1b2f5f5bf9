import { keepUtf8Head } from 'dsh-basics'
import type { ToolCallEvent, ToolResult } from 'dsh-tools'
import type { HumanEvent } from '../human/events'
import { redactArguments, type TypedInputVerdict } from './redact'

/** Bytes of a tool name kept in a record (a model may call a tool that does not exist). */
const MAX_NAME_BYTES = 128

/**
 * Result facts (`meta`) copied into a record's outcome: what the wait ended on and what ran, never
 * output. Each is copied only when it has the listed type.
 */
const OUTCOME_FACTS: Readonly<Record<string, 'string' | 'number' | 'boolean'>> = Object.freeze({
  waitReason: 'string',
  exitCode: 'number',
  background: 'boolean',
  jobId: 'string',
  truncated: 'boolean',
})

/** One record of a finished tool call: who, which session, the bounded and redacted arguments, and the outcome without output. */
export function toolCallRecord(call: ToolCallEvent, result: ToolResult, durationMs: number, maxArgumentBytes: number, verdict: TypedInputVerdict | undefined) {
  const meta = result.meta ?? {}
  const outcome: Record<string, unknown> = { isError: result.isError }
  if (result.error) outcome.errorCode = result.error.code
  else if (typeof meta.errorCode === 'string') outcome.errorCode = meta.errorCode
  for (const [key, type] of Object.entries(OUTCOME_FACTS)) if (typeof meta[key] === type) outcome[key] = meta[key]
  const input = meta.input as { kind?: unknown } | undefined
  if (typeof input?.kind === 'string') outcome.input = input.kind
  const status = meta.sessionStatus as { kind?: unknown } | undefined
  if (typeof status?.kind === 'string') outcome.sessionStatus = status.kind
  outcome.bytes = result.content.reduce((sum, block) => sum + Buffer.byteLength(block.text, 'utf8'), 0)
  outcome.durationMs = Math.round(durationMs * 10) / 10
  const session = sessionOf(call.arguments, meta)
  return {
    time: new Date(call.startedAt).toISOString(),
    event: 'tool_call',
    agent: call.agent?.id ?? null,
    session: session ?? null,
    tool: keepUtf8Head(String(call.name), MAX_NAME_BYTES),
    callId: keepUtf8Head(String(call.callId), MAX_NAME_BYTES),
    arguments: redactArguments(call.name, call.arguments, maxArgumentBytes, verdict),
    outcome,
  }
}

/** One record of what a person did: `human_attach`, `human_takeover`, `human_secret_handoff`, `human_release`, `human_detach`. */
export function humanRecord(event: HumanEvent, now: Date = new Date()) {
  return {
    time: now.toISOString(),
    event: `human_${event.kind}`,
    agent: event.agentId,
    session: event.sessionId,
    client: event.client,
    ...(event.writer !== undefined ? { writer: event.writer } : {}),
    ...(event.program !== undefined ? { program: keepUtf8Head(event.program, MAX_NAME_BYTES) } : {}),
  }
}

/** The session a call is about: its `sessionId` argument, else the one its result names (a new session). */
function sessionOf(args: unknown, meta: Record<string, unknown>): string | undefined {
  const named = typeof args === 'object' && args !== null ? (args as { sessionId?: unknown }).sessionId : undefined
  if (typeof named === 'string') return keepUtf8Head(named, MAX_NAME_BYTES)
  return typeof meta.sessionId === 'string' ? meta.sessionId : undefined
}
