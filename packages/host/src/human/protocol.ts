import { Buffer } from 'node:buffer'
import type { HumanSessionEntry } from './gateway'

/**
 * The attach protocol over a host's Unix socket: one JSON object per line, each way. Terminal bytes
 * travel as base64 so a line never breaks inside them. The first client line must be `hello`.
 */
export type ClientMessage =
  | { type: 'hello'; token: string }
  | { type: 'list' }
  | { type: 'attach'; sessionId: string; readOnly?: boolean }
  | { type: 'input'; data: string }
  | { type: 'detach' }

/** Where a listed session lives: the host that serves it. */
export interface HostInfo {
  /** The host's process id (its socket is `<pid>.sock`). */
  pid: number
  /** The host's working directory (the agents' workspace). */
  cwd: string
  /** The composition it serves, when known. */
  configPath?: string
}

/** Host to client messages; `error` carries a stable code, and `fatal` when the host hangs up after it. */
export type ServerMessage =
  | { type: 'ok'; pid: number }
  | { type: 'sessions'; host: HostInfo; sessions: HumanSessionEntry[] }
  | { type: 'screen'; sessionId: string; data: string; rows?: number; cols?: number; writer: boolean; readOnlyReason?: ReadOnlyReason }
  | { type: 'output'; data: string }
  | { type: 'end'; reason: string }
  | { type: 'detached' }
  | { type: 'error'; code: AttachErrorCode; message: string; fatal?: boolean }

/** Why an attach watches only: the client asked (`--read-only`) or another person holds the writer role. */
export type ReadOnlyReason = 'READ_ONLY' | 'HUMAN_WRITER_TAKEN'

/** Stable error codes of the attach protocol. */
export type AttachErrorCode =
  | 'UNAUTHORIZED'
  | 'BAD_MESSAGE'
  | 'LINE_TOO_LONG'
  | 'NO_SESSION'
  | 'NO_TERMINALS'
  | 'NOT_ATTACHED'
  | 'ALREADY_ATTACHED'
  | 'READ_ONLY'
  | 'HUMAN_WRITER_TAKEN'
  | 'SLOW_CONSUMER'
  | 'ATTACH_FAILED'

/** Longest line either side accepts (bytes, newline excluded); a screen replay of a huge window still fits. */
export const MAX_LINE_BYTES = 1024 * 1024

/** One message as a line on the wire. */
export function encodeLine(message: ClientMessage | ServerMessage): string {
  return `${JSON.stringify(message)}\n`
}

/** Base64 of terminal bytes or text, for `output`, `screen` and `input`. */
export function toBase64(data: Uint8Array | string): string {
  return (typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data.buffer, data.byteOffset, data.byteLength)).toString('base64')
}

/** Bytes of a base64 field. */
export function fromBase64(data: string): Buffer {
  return Buffer.from(data, 'base64')
}

/**
 * Splits a byte stream into lines without ever holding more than `maxBytes` of one line: past it,
 * `push` throws a `LINE_TOO_LONG` so the caller can answer and hang up instead of buffering on.
 */
export class LineSplitter {
  #pending: Buffer[] = []
  #pendingBytes = 0

  constructor(private readonly maxBytes: number = MAX_LINE_BYTES) {}

  /** Feed a chunk; returns the complete lines it finished (UTF-8 decoded, newline removed). */
  push(chunk: Buffer): string[] {
    const lines: string[] = []
    let start = 0
    for (let newline = chunk.indexOf(0x0a); newline !== -1; newline = chunk.indexOf(0x0a, start)) {
      this.#append(chunk.subarray(start, newline))
      lines.push(Buffer.concat(this.#pending).toString('utf8'))
      this.#pending = []
      this.#pendingBytes = 0
      start = newline + 1
    }
    this.#append(chunk.subarray(start))
    return lines
  }

  #append(part: Buffer): void {
    if (part.length === 0) return
    this.#pendingBytes += part.length
    if (this.#pendingBytes > this.maxBytes) throw new LineTooLongError(this.maxBytes)
    this.#pending.push(part)
  }
}

/** A line longer than the protocol allows. */
export class LineTooLongError extends Error {
  /** Stable code, as sent in the protocol error. */
  readonly code = 'LINE_TOO_LONG'

  constructor(maxBytes: number) {
    super(`a line is longer than ${maxBytes} bytes; the attach protocol sends one JSON message per line`)
    this.name = 'LineTooLongError'
  }
}

/** Parse a client line into a message, or return why it is not one. */
export function parseClientMessage(line: string): ClientMessage | string {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch {
    return 'not valid JSON'
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not a JSON object'
  const message = value as Record<string, unknown>
  switch (message.type) {
    case 'hello':
      return typeof message.token === 'string' ? { type: 'hello', token: message.token } : '"hello" needs a string "token"'
    case 'list':
    case 'detach':
      return { type: message.type }
    case 'attach':
      if (typeof message.sessionId !== 'string' || !message.sessionId) return '"attach" needs a string "sessionId"'
      return { type: 'attach', sessionId: message.sessionId, readOnly: message.readOnly === true }
    case 'input':
      return typeof message.data === 'string' ? { type: 'input', data: message.data } : '"input" needs base64 "data"'
    default:
      return `unknown message type ${JSON.stringify(message.type)}; expected hello, list, attach, input or detach`
  }
}
