import type { Agent } from 'dsh-agent'
import type { LinePattern } from 'dsh-basics'
import type { TerminalHumanPresence } from './human'
import type { TerminalInputState, TerminalOutputMatch } from './input-state'
import type { TerminalScreen, TerminalSize } from './screen'

declare const terminalSessionIdBrand: unique symbol

/**
 * Opaque session id minted by `ctx.terminals` as `pty-<n>`.
 * Branded so that a display name or a raw model string is never mistaken for an issued id.
 */
export type TerminalSessionId = string & { readonly [terminalSessionIdBrand]: true }

/**
 * Treat a caller-supplied string (e.g. a tool argument) as a session id for lookup.
 * It does not make the id valid: the service still answers `NO_SESSION` or `FOREIGN_SESSION`.
 */
export function asTerminalSessionId(value: string): TerminalSessionId {
  return value as TerminalSessionId
}

/** Every reason a send may return, as a runtime list for schemas and exhaustive checks. */
export const TERMINAL_WAIT_REASONS = ['stdin_read', 'inferred_idle', 'timeout', 'session_exit', 'output_match'] as const

/**
 * Why one send returned control to its caller. Independent of {@link TerminalSessionStatus}:
 * `timeout`, `inferred_idle` and `output_match` never imply that anything exited. The seed's four
 * grew by `output_match` (the send's `waitFor` matched new output) when sends learned to wait for
 * long-running work.
 */
export type TerminalWaitReason = (typeof TERMINAL_WAIT_REASONS)[number]

/** The closed set of signals a caller may deliver, as a runtime list for schemas and validation. */
export const TERMINAL_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGKILL', 'SIGTSTP', 'SIGHUP'] as const

/** A signal a caller may deliver to a session's foreground process group. */
export type TerminalSignal = (typeof TERMINAL_SIGNALS)[number]

/** Narrow an untrusted value to {@link TerminalSignal}; the service uses it to refuse anything else. */
export function isTerminalSignal(value: unknown): value is TerminalSignal {
  return typeof value === 'string' && (TERMINAL_SIGNALS as readonly string[]).includes(value)
}

/** Status of a session's top-level process, observed independently of any send. */
export type TerminalSessionStatus = { kind: 'running' } | { kind: 'exited'; exitCode: number | null; signal: string | null }

/** What a consumer asks `spawn` for; `name` is owner-local display metadata, never an address. */
export interface TerminalSpawnRequest {
  /** Registered backend type, e.g. `shell`. */
  type: string
  /** Optional display name, unique among the owner's published and in-flight sessions. */
  name?: string
  /** Working directory for the backend to validate and use. */
  cwd?: string
  /** Window size to start with; default: the backend's configured size. */
  size?: TerminalSize
  /**
   * Where the session runs: a target of the subprocess provider (a machine over ssh, a container);
   * default the provider's default. The provider refuses a name it does not have.
   */
  target?: string
}

/** What a backend receives: the request plus the identity and cancellation the service assigned. */
export interface TerminalBackendSpawnSpec extends TerminalSpawnRequest {
  /** Id already minted for this session; stable across rollback. */
  sessionId: TerminalSessionId
  /** The exact owning agent (for environment, sandbox policy and diagnostics). */
  owner: Agent
  /** Aborted by the caller or by owner/service disposal; the backend must clean up and reject. */
  signal: AbortSignal
  /**
   * Set when a session observer (e.g. a recorder) takes raw output: the backend hands it every chunk
   * the terminal prints, from the first byte on, in order, synchronously as it arrives.
   */
  onOutput?: (bytes: Uint8Array) => void
  /**
   * The registry keeps sessions detached for this long after their owner ended (its `detachedTtlMs`,
   * set when > 0): a backend whose provider can keep the terminal beyond this process asks it to.
   */
  detachedTtlMs?: number
}

/** What every send may carry besides what it writes. */
export interface TerminalSendOptions {
  /** The id of the tool call that asked for this send, for observers (recordings name it); no effect on the send. */
  callId?: string
  /** Cancels the send: the backend delivers a real SIGINT to the foreground group. */
  signal?: AbortSignal
  /**
   * The send belongs to work that outlives its caller (a background job): when the session is
   * detached it keeps running and keeps its result (not released), and a resume does not wait for it.
   */
  outlivesOwner?: boolean
  /**
   * Whether silence alone may settle the send (`inferred_idle`); default true. False for a caller
   * that already has control back (a background send): it then ends only on a proven wait for
   * input, the session's exit, cancellation or its timeout.
   */
  settleOnSilence?: boolean
  /** Absolute bound of this send from its start, in ms (1 … 2³¹−1); default: the backend's own. */
  timeoutMs?: number
  /**
   * Settle as soon as output that arrives after the write matches (wait reason `output_match`),
   * tested line by line. Silence then does not end the send unless `idleMs` is given too; a wait
   * for input, the session's exit, cancellation and the timeout still do. A `LinePattern` (from
   * `LinePattern.compile` in dsh-basics), never a RegExp: its test takes linear time on the host.
   */
  waitFor?: LinePattern
  /** Silence that settles this send as `inferred_idle`, in ms (1 … 2³¹−1); default: the backend's own. */
  idleMs?: number
}

/**
 * Types `text` (verbatim, control characters allowed) as UTF-8, then Enter when `submit`. The
 * default kind, so `kind` may be left out. With `size` the window is resized first (the program in
 * front gets SIGWINCH). `""` without `submit` writes nothing (as a {@link TerminalWaitSend}).
 */
export interface TerminalTextSend extends TerminalSendOptions {
  kind?: 'text'
  text: string
  submit: boolean
  size?: TerminalSize
  keys?: undefined
}

/**
 * Presses `keys` in order: names from `TERMINAL_KEY_NAMES`, single characters, `C-<key>`,
 * `M-<key>`; the backend encodes them for the program's current modes (application cursor keys,
 * keypad mode). With `size` the window is resized first.
 */
export interface TerminalKeysSend extends TerminalSendOptions {
  kind: 'keys'
  keys: readonly string[]
  size?: TerminalSize
  text?: undefined
  submit?: undefined
}

/** Only resizes the window to `size` and waits for what the program does about it (its redraw). */
export interface TerminalResizeSend extends TerminalSendOptions {
  kind: 'resize'
  size: TerminalSize
  text?: undefined
  submit?: undefined
  keys?: undefined
}

/** Writes nothing and only waits (a command already running, the prompt that follows it). */
export interface TerminalWaitSend extends TerminalSendOptions {
  kind: 'wait'
  text?: undefined
  submit?: undefined
  keys?: undefined
  size?: undefined
}

/**
 * One send to a session, one of four kinds told by `kind`: text (the default), keys, resize-only or
 * wait-only. The registry checks it once (`INVALID_REQUEST`) before a backend sees it, and hands
 * the backend a request whose `kind` says what it is.
 */
export type TerminalSendRequest = TerminalTextSend | TerminalKeysSend | TerminalResizeSend | TerminalWaitSend

/** Output consumed from a running send since the previous read (a moving cursor). */
export interface TerminalSendRead {
  /** New output since the previous `readOutput()` call. */
  delta: string
  /** True when this delta lost bytes to a bound. */
  truncated: boolean
}

/** Final result of one send. */
export interface TerminalSendResult {
  /**
   * The send's output kept at settlement: its rendered lines within the byte bound, less what a
   * `readOutput` delta took. One meaning: never the visible screen, which is {@link TerminalSendResult.screen}.
   */
  viewport: string
  /** Why the wait ended. */
  waitReason: TerminalWaitReason
  /** Top-level process status at settlement. */
  sessionStatus: TerminalSessionStatus
  /** True when this result lost bytes (not "the scrollback once overflowed"). */
  truncated: boolean
  /**
   * Output the session printed after the previous result was taken (the previous send settled, or a
   * read showed the newest lines) and before this send started: shown to nobody yet. Absent when none.
   */
  earlierOutput?: string
  /** True when {@link TerminalSendResult.earlierOutput} lost bytes to the backend's bound. */
  earlierTruncated?: boolean
  /**
   * Absolute, 1-based scrollback number of the line the viewport's first line belongs to: viewport line
   * i (split on `\n`) is (part of) scrollback line `firstLine + i`, so a caller that shortens the
   * viewport can name the `read({ fromLine })` that returns the left-out lines. The first viewport line
   * may be only what followed the prompt, the last the unterminated current line as it stood at
   * settlement (an empty last line is the next line, not yet counted). Absent when the viewport is
   * empty or the mapping would not be exact.
   */
  firstLine?: number
  /** {@link TerminalSendResult.firstLine} for {@link TerminalSendResult.earlierOutput}: the same mapping, or absent. */
  earlierFirstLine?: number
  /**
   * The oldest scrollback line still kept when the send settled (1-based, as `firstLine`), once the
   * scrollback dropped lines: a caller that left out lines before it must not offer to read them
   * back. Absent while every line is kept, and where lines are not numbered.
   */
  oldestLine?: number
  /**
   * The beginning of this send's output when the viewport lost it to the backend's byte bound:
   * whole lines from the send's start (the first may be only the part after the prompt), and what
   * was lost between them and the viewport. The output is exactly `text`, a newline, `gapBytes`
   * lost bytes, then the viewport: every line is in one place once, so when the viewport still has
   * (part of) a line the head captured, `text` ends before it and `gapLines` is 0. Absent when the
   * viewport lost no whole line (it holds the whole output, or lost only part of its first line),
   * when the output's first line alone exceeds the head bound, and once a `readOutput()` delta took
   * output (the result then starts where the reads stopped).
   */
  outputHead?: {
    /** Whole lines joined by "\n", at most the backend's head bound in UTF-8 bytes (no trailing newline). */
    text: string
    /** Absolute, 1-based scrollback number of its first line, when known (same rules as `firstLine`). */
    firstLine?: number
    /** Lines neither in `text` nor in the viewport (whole lines dropped in between). */
    gapLines: number
    /**
     * UTF-8 bytes lost in between, newlines included (a viewport first line that lost its own head
     * counts its lost part here); the newline that ends `text` is not counted.
     */
    gapBytes: number
  }
  /**
   * Exit status of what this send ran, interrupted or (empty send) waited for, seen ending during this
   * send (e.g. from a prompt marker); absent otherwise, never an earlier command's.
   */
  exitCode?: number
  /** What the terminal waits for at settlement (or what runs in front); absent after exit or when unknown. */
  input?: TerminalInputState
  /** What `waitFor` matched, when the send settled as `output_match`. */
  match?: TerminalOutputMatch
  /**
   * What the terminal shows at settlement, when a full-screen program holds it (the alternate screen is
   * active, or the foreground program reads raw keys): its redraws make `viewport` a byte soup, the
   * screen is what a person would see. `viewport` keeps the line view all the same.
   */
  screen?: TerminalScreen
  /** A person attached to the session when the send settled (set by the registry, not the backend). */
  human?: TerminalHumanPresence
}

/**
 * A live send as a backend returns it. `released`, when present, lets the backend keep the
 * session's send reservation past `done` (e.g. until a cancelling SIGINT has been delivered).
 */
export interface TerminalSendOperation {
  /** Settles on readiness, timeout, cancellation or top-level exit. */
  done: Promise<TerminalSendResult>
  /** Consume output produced since the previous call. */
  readOutput(): TerminalSendRead
  /** Request cancellation (SIGINT); false once the operation has settled. */
  cancel(): boolean
  /** Settles when the backend no longer acts on the session for this send; defaults to `done`. */
  released?: Promise<void>
  /**
   * The session's earlier output this send took when it started (printed after the previous result
   * was taken), known before any `readOutput()`: a consumer that streams the send can show it first.
   * The result's `earlierOutput` begins with exactly this text. Absent when there was none, or where
   * the backend learns it only at settlement.
   */
  readonly earlier?: TerminalEarlierOutput | undefined
}

/** Output a session printed between two results, as a send takes it (see {@link TerminalSendOperation.earlier}). */
export interface TerminalEarlierOutput {
  /** The text, bounded by the backend. */
  readonly output: string
  /** True when it lost bytes to that bound. */
  readonly truncated: boolean
  /** Absolute, 1-based scrollback number of its first line, when exact (as a result's `firstLine`). */
  readonly firstLine?: number | undefined
}

/**
 * A send as the service hands it out. Its `done` settles only after the reservation was dropped,
 * so a caller that awaited `done` can start the next send immediately.
 */
export interface TerminalSendHandle extends TerminalSendOperation {
  /** Resolves (never rejects) once the reservation is dropped: `done` and the backend's `released` settled. */
  released: Promise<void>
}

/**
 * A page request over retained scrollback: back from the newest line (`offset`), or forward from an
 * absolute line number (`fromLine`), never both.
 */
export interface TerminalReadRequest {
  /** Lines to skip, counted back from the newest line; the page ends there. Not with `fromLine`. */
  offset?: number
  /**
   * Read forward from this absolute line (an integer ≥ 1, numbered as in {@link TerminalReadResult}):
   * lines `fromLine … fromLine + count − 1`, fewer when the byte cap ends the page first. Evicted lines
   * of that window are gone (the page is truncated); past the newest line the page is empty. Not with `offset`.
   */
  fromLine?: number
  /** Maximum number of lines to return. */
  count?: number
}

/**
 * One bounded page of scrollback with its position. Lines are numbered absolutely from 1, the first
 * line the session ever printed, so a number stays valid after older lines were evicted.
 */
export interface TerminalReadResult {
  /** The page text. */
  text: string
  /** Lines the session produced so far, evicted ones included; an unterminated, non-empty current line counts. */
  totalLines: number
  /** Absolute number of the page's first line; 0 for an empty page. */
  lineBegin: number
  /** Absolute number of the page's last line; 0 for an empty page. A forward read continues at `lineEnd + 1`. */
  lineEnd: number
  /** Oldest line still retained (1 until something was evicted): lines before it are gone for good. */
  oldestLine: number
  /**
   * True when this page lost bytes: its window reached evicted lines, or a line in it was cut (by a
   * bound upstream, or because it alone exceeds the read's byte cap). A page shortened to whole
   * lines by the byte cap is not truncated: `lineBegin`/`lineEnd` say what it holds.
   */
  truncated: boolean
}

/** Proof of delivery: the process group that actually received the signal. */
export interface TerminalSignalResult {
  /** Always true; a failed delivery rejects instead. */
  delivered: true
  /** The foreground process group the signal went to. */
  targetPgid: number
}

/** Owner-visible description of one published session. */
export interface TerminalSessionSnapshot {
  /** Service-issued id. */
  sessionId: TerminalSessionId
  /** Display name, when one was given. */
  name?: string
  /** Backend type. */
  type: string
  /** Top-level process id, when the backend has one. */
  pid?: number
  /** Top-level process status now. */
  status: TerminalSessionStatus
  /** Window size now, when the backend has a terminal. */
  size?: TerminalSize
  /** A person attached to the session (`dsh-terminal attach`, the web view): watching, or typing lately. */
  human?: TerminalHumanPresence
  /**
   * When its agent ended and it was kept, detached (epoch ms): any agent of the host may adopt it
   * (`TerminalSessionService.resume`) until `detachedTtlMs` passes. Absent for an owned session.
   */
  detachedAt?: number
  /** The subprocess provider's target it runs on, when it was opened on a named one. */
  target?: string
}

/** What `spawn` resolves with: the snapshot plus the startup output shown to the model. */
export interface TerminalSpawnResult extends TerminalSessionSnapshot {
  /** Bounded output produced while the session started. */
  motd: string
}
