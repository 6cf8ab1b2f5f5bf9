import type { AppliedTerminalLimits, DetachedTerminal, DurableTerminalSpec, TerminalExit, TerminalLimits } from 'dsh-subprocess'
import type { ProtocolErrorCode } from './errors'

/** Features every peer must have (version 1's; see PROTOCOL.md, "Hello"). */
export const FEATURES: readonly string[] = ['binary-output', 'credit']

/** The feature of binary input frames: a client may send a write as an input frame, with no reply. */
export const INPUT_FRAMES_FEATURE = 'input-frames'

/**
 * The feature of input offsets: a session host counts each terminal's input bytes and an `adopt`
 * answers the count (`inputOffset`), so a client that lost a link resends exactly what never arrived.
 */
export const INPUT_OFFSETS_FEATURE = 'input-offsets'

/** Features this side announces: the required ones, durable terminals, liveness pings, input frames and input offsets (version 2). */
export const OFFERED_FEATURES: readonly string[] = [...FEATURES, 'durable', 'ping', INPUT_FRAMES_FEATURE, INPUT_OFFSETS_FEATURE]

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
  readonly setFacts: { readonly terminal: number; readonly facts: string }
  readonly list: Readonly<Record<string, never>>
  readonly adopt: { readonly key: string }
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
  /** Files to write on the session host's machine, by the variable that gets each one's path (the spec's `envFiles`). */
  readonly envFiles?: Readonly<Record<string, string>>
  /** Terminal height. */
  readonly rows: number
  /** Terminal width. */
  readonly cols: number
  /** Teardown grace for processes that handle SIGTERM. */
  readonly graceMs: number
  /** Caps for the whole session. */
  readonly limits?: TerminalLimits
  /** Keep the terminal, detached, when this connection ends (version 2). */
  readonly durable?: DurableTerminalSpec
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

/** What `list` answers: the detached durable terminals of this session host. */
export interface ListResult {
  readonly terminals: readonly DetachedTerminal[]
}

/** What `adopt` answers; the output frames from `replayFrom` follow it. */
export interface AdoptResult extends SpawnResult {
  /** What the last client stored with `setFacts` (`''` when nothing). */
  readonly facts: string
  /** Absolute offset of the first replayed byte: older ones were dropped from the ring. */
  readonly replayFrom: number
  /** Input bytes the terminal was given so far, by every client (feature `input-offsets`). */
  readonly inputOffset?: number
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
  /** Stable code (see PROTOCOL.md, "Errors"); for a failed input frame, the write's own code. */
  readonly code: ProtocolErrorCode | WireError['code']
  /** What was wrong, naming the frame. */
  readonly message: string
  /** The terminal whose input frame could not be written (feature `input-frames`). */
  readonly terminal?: number
}

/** Are you there? Answered at once by a {@link PongMessage} with the same nonce (feature `ping`). */
export interface PingMessage {
  readonly type: 'ping'
  /** Chosen by the sender; echoed. */
  readonly nonce: number
}

/** The answer to a {@link PingMessage}. */
export interface PongMessage {
  readonly type: 'pong'
  /** The ping's nonce. */
  readonly nonce: number
}

/** Every control message of version 2. */
export type ControlMessage = HelloMessage | RequestMessage | ReplyMessage | ExitMessage | AckMessage | CancelMessage | ErrorMessage | PingMessage | PongMessage

/** True for a positive safe integer (ids, terminal numbers). */
export function isPositiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0
}
