import type { ToolResult } from 'dsh-tools'
import { errorMessage } from 'dsh-basics'

/** One request line: `{"id": …, "tool": "terminal_send", "arguments": {…}}`. */
export interface HeadlessRequest {
  /** Any JSON value; echoed on the response line (null when the line had none). */
  id: unknown
  /** Tool name, e.g. `terminal_open`. */
  tool: string
  /** Tool arguments: an object (or its JSON text); missing means `{}`. */
  arguments?: unknown
}

/** One response line: `{"id": …, "isError": bool, "text": "…", "meta": {…}}`. */
export interface HeadlessResponse {
  id: unknown
  isError: boolean
  /** The text the model would read (content blocks joined by newlines). */
  text: string
  /** Structured facts of the result; `errorCode` names a failure's stable code. */
  meta: Record<string, unknown>
}

/** Code of a response to a line that is not a request. */
export const MALFORMED_REQUEST = 'MALFORMED_REQUEST'

/** Either a request to run, or the error line a malformed request line gets instead. */
export type ParsedLine = { ok: true; request: HeadlessRequest } | { ok: false; response: HeadlessResponse }

/**
 * Parse one input line. Anything that is not a JSON object with a non-empty string `tool` becomes
 * an error response (with the line's `id` when it had one), never an exception.
 */
export function parseRequestLine(line: string): ParsedLine {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch (error) {
    return malformed(null, `not valid JSON (${errorMessage(error)})`)
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return malformed(null, 'expected a JSON object like {"id": 1, "tool": "terminal_list", "arguments": {}}')
  }
  const record = value as Record<string, unknown>
  const id = record.id ?? null
  if (typeof record.tool !== 'string' || !record.tool) return malformed(id, '"tool" must be a non-empty string naming a tool')
  const request: HeadlessRequest = { id, tool: record.tool }
  if (record.arguments !== undefined) request.arguments = record.arguments
  return { ok: true, request }
}

/** The response line of a finished call: its text, `isError`, and meta (plus `errorCode` on failure). */
export function responseFor(id: unknown, result: ToolResult): HeadlessResponse {
  const meta: Record<string, unknown> = { ...(result.meta ?? {}) }
  if (result.error) meta.errorCode = result.error.code
  return { id, isError: result.isError, text: result.content.map((block) => block.text).join('\n'), meta }
}

/**
 * Serialise a response as one line. JSON escapes CR and LF inside strings; U+2028 and U+2029 are
 * escaped too, since some line readers split on them.
 */
export function formatResponse(response: HeadlessResponse): string {
  let line: string
  try {
    line = JSON.stringify(response)
  } catch {
    line = JSON.stringify({ ...response, meta: {} })
  }
  return `${line.replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029')}\n`
}

function malformed(id: unknown, reason: string): ParsedLine {
  const text = `Error: malformed request line: ${reason}`
  return { ok: false, response: { id, isError: true, text, meta: { errorCode: MALFORMED_REQUEST } } }
}
