import { TerminalError } from 'dsh-terminal'
import { HumanGatewayError } from '../human/gateway'
import { WebRequestError } from './http-io'

/** What the page is told when a request is refused: HTTP status plus a stable `{code, message}`. */
export interface WebRefusal {
  readonly status: number
  readonly code: string
  readonly message: string
}

/** Status per terminal refusal code; anything else a terminal refuses is a conflict with its state (409). */
const TERMINAL_STATUS: Partial<Record<string, number>> = {
  NO_SESSION: 404,
  FOREIGN_SESSION: 404,
  INVALID_REQUEST: 403,
  HUMAN_WRITER_TAKEN: 409,
}

/**
 * Map an error from the gateway, a view or request parsing to what the page sees. Unknown errors
 * become a generic 500 (`undefined` message here means: log it, do not show it).
 */
export function refusalOf(error: unknown): WebRefusal & { readonly unexpected: boolean } {
  if (error instanceof WebRequestError) return { status: error.status, code: error.code, message: error.message, unexpected: false }
  if (error instanceof HumanGatewayError) return { status: 404, code: error.code, message: error.message, unexpected: false }
  if (error instanceof TerminalError) return { status: TERMINAL_STATUS[error.code] ?? 409, code: error.code, message: error.message, unexpected: false }
  return { status: 500, code: 'INTERNAL', message: 'internal error (see the host log)', unexpected: true }
}
