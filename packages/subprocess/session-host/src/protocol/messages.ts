import type { AppliedTerminalLimits, TerminalExit, TerminalLimits } from 'dsh-subprocess'
import type { ProtocolErrorCode } from './errors'

/** Features version 1 defines; both are required (see PROTOCOL.md, "Hello"). */
export const FEATURES: readonly string[] = ['binary-output', 'credit']

/** Who sent a hello. */
export type PeerRole = 'client' | 'session-host'

/** The first frame each way. */
export interface HelloMessage {
  readonly type: 'hello'
  /** The protocol version the sender speaks (`PROTOCOL_VERSION`). */
  readonly version: number
  /** Which end sent it. */
  readonly role: PeerRole
  /** Optional behaviour the sender has; version 1 requires {@link FEATURES}. */
  readonly features: readonly string[]
  /** The session host's pid (session host only). */
  readonly pid?: number
  /** Unacknowledged output per terminal before the session host pauses its PTY (session host only). */
  readonly windowBytes?: number
}

/** The methods a client may call, with their params. */
export interface RequestParams {
  readonly spawn: SpawnParams
  readonly write: { readonly terminal: number; readonly data: string }
  readonly resize: { readonly terminal: number; readonly rows: number; readonly cols: number }
  readonly inspectForeground: { readonly terminal: number; readonly options?: { readonly terminalModes?: boolean } }
  readonly signalForeground: { readonly terminal: number; readonly signal: string }
  readonly pinShellGroup: { readonly terminal: number; readonly processGroupId: number }
  readonly terminate: { readonly terminal: number }
}

/** A method name of {@link RequestParams}. */
export type RequestMethod = keyof RequestParams

/** What a spawn sends: the spec without its functions, and the complete environment. */
export interface SpawnParams {
  /** The argv to run, already wrapped by the client when the spec had a wrapper. */
  readonly argv: readonly string[]
  /** Absolute working directory. */
  readonly cwd: string
  /** The complete environment (the client's scrubbed inherited environment plus the spec's overrides). */
  readonly env: Readonly<Record<string, string>>
  /** Terminal height. */
  readonly rows: number
  /** Terminal width. */
  readonly cols: number
  /** Teardown grace for processes that handle SIGTERM. */
  readonly graceMs: number
  /** Caps for the whole session. */
  readonly limits?: TerminalLimits
}

/** What a spawn answers. */
export interface SpawnResult {
  /** The connection's number for the terminal (events and later requests name it). */
  readonly terminal: number
  /** The top-level process's pid. */
  readonly pid: number
  /** The caps in force. */
  readonly limits: AppliedTerminalLimits
}

/** A call from the client. */
export interface RequestMessage<M extends RequestMethod = RequestMethod> {
  readonly type: 'request'
  /** Positive, unique among the client's pending requests; the reply carries it. */
  readonly id: number
  /** What to do. */
  readonly method: M
  /** Its arguments. */
  readonly params: RequestParams[M]
}

/** A failed request's error, as the session host raised it. */
export interface WireError {
  /** A stable code: the seam's (`TERMINAL_EXITED`, …) or the protocol's (`UNKNOWN_TERMINAL`, …). */
  readonly code: string
  /** What happened, for people and models. */
  readonly message: string
  /** Pids that outlived a teardown (`CLEANUP_FAILED`). */
  readonly survivors?: readonly number[]
}

/** The answer to one request. */
export type ReplyMessage =
  | { readonly type: 'reply'; readonly id: number; readonly ok: true; readonly result: unknown }
  | { readonly type: 'reply'; readonly id: number; readonly ok: false; readonly error: WireError }

/** A terminal's top-level process ended; every output frame of it came before. */
export interface ExitMessage {
  readonly type: 'exit'
  /** The terminal's number. */
  readonly terminal: number
  /** How its top-level process ended. */
  readonly exit: TerminalExit
  /** Total output bytes of the terminal. */
  readonly offset: number
}

/** The client delivered every byte of `terminal` before `offset`. */
export interface AckMessage {
  readonly type: 'ack'
  /** The terminal's number. */
  readonly terminal: number
  /** Absolute offset one past the last delivered byte. */
  readonly offset: number
}

/** Abort the pending spawn request `id`. */
export interface CancelMessage {
  readonly type: 'cancel'
  /** The spawn request to abort. */
  readonly id: number
}

/** A connection-level problem; after a fatal one the sender hangs up. */
export interface ErrorMessage {
  readonly type: 'error'
  /** Stable code (see PROTOCOL.md, "Errors"). */
  readonly code: ProtocolErrorCode
  /** What was wrong, naming the frame. */
  readonly message: string
}

/** Every control message of version 1. */
export type ControlMessage = HelloMessage | RequestMessage | ReplyMessage | ExitMessage | AckMessage | CancelMessage | ErrorMessage

/** True for a positive safe integer (ids, terminal numbers). */
export function isPositiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0
}
