/**
 * Stable codes of protocol-level failures (see PROTOCOL.md, "Errors"); `SESSION_HOST_LOST` is the
 * client's own: its connection to the session host ended.
 */
export type ProtocolErrorCode =
  | 'PROTOCOL_VERSION'
  | 'HELLO_REQUIRED'
  | 'FRAME_TOO_LARGE'
  | 'MALFORMED_FRAME'
  | 'UNKNOWN_FRAME'
  | 'UNEXPECTED_FRAME'
  | 'UNKNOWN_METHOD'
  | 'UNKNOWN_TERMINAL'
  | 'INVALID_ACK'
  | 'NOT_READING'

/** Codes after which the connection is closed: the stream cannot be trusted to continue. */
export const FATAL_CODES: ReadonlySet<ProtocolErrorCode> = new Set(['PROTOCOL_VERSION', 'HELLO_REQUIRED', 'FRAME_TOO_LARGE', 'NOT_READING'])

/** A frame or message that breaks the protocol; `code` is stable, `fatal` says the connection must close. */
export class ProtocolError extends Error {
  constructor(
    /** Stable routing code. */
    readonly code: ProtocolErrorCode,
    message: string,
    /** True when the sender of the error hangs up after reporting it. */
    readonly fatal: boolean = FATAL_CODES.has(code),
  ) {
    super(message)
    this.name = 'ProtocolError'
  }
}
