import type { ServerResponse } from 'node:http'

/** Stable codes of the HTTP host's own refusals (`error.data.code` of the JSON-RPC error body). */
export type HttpErrorCode =
  | 'UNAUTHORIZED'
  | 'FORBIDDEN_ORIGIN'
  | 'NOT_FOUND'
  | 'UNKNOWN_SESSION'
  | 'SESSION_REQUIRED'
  | 'TOO_MANY_SESSIONS'
  | 'PAYLOAD_TOO_LARGE'
  | 'PARSE_ERROR'
  | 'SHUTTING_DOWN'
  | 'INTERNAL_ERROR'

const STATUS: Record<HttpErrorCode, number> = {
  UNAUTHORIZED: 401,
  FORBIDDEN_ORIGIN: 403,
  NOT_FOUND: 404,
  UNKNOWN_SESSION: 404,
  SESSION_REQUIRED: 400,
  TOO_MANY_SESSIONS: 503,
  PAYLOAD_TOO_LARGE: 413,
  PARSE_ERROR: 400,
  SHUTTING_DOWN: 503,
  INTERNAL_ERROR: 500,
}

/** JSON-RPC error codes as the SDK's transport uses them (-32001 = session not found). */
const RPC_CODE: Partial<Record<HttpErrorCode, number>> = { UNKNOWN_SESSION: -32001, PARSE_ERROR: -32700 }

/**
 * Answer a refused request the way the SDK's transport answers its own: the HTTP status plus a
 * JSON-RPC error body (`id: null`) whose message says what to do and whose `data.code` is stable.
 */
export function sendHttpError(res: ServerResponse, code: HttpErrorCode, message: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.end()
    return
  }
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code: RPC_CODE[code] ?? -32000, message, data: { code } }, id: null })
  res.writeHead(STATUS[code], { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), ...headers })
  res.end(body)
}
