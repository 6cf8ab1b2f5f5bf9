import type { ScreenSource } from '../screen/screen-send'
import type { LinePattern } from 'dsh-basics'
import { type ForegroundFacts, type InspectOptions, isStdinWaitProven, isStdinWaitProvenOrUnprovable } from 'dsh-subprocess'
import type { TerminalEarlierOutput, TerminalInputState, TerminalSessionStatus } from 'dsh-terminal'
import { ownsPrompt, type ScreenView } from '../input/input-state'
import type { SendOutputBuffer } from '../output/index'
import type { TerminalStream } from '../session/terminal-stream'

/** What a send needs from its session: the handle's operations, the output stream and status. */
export interface SendSession {
  /** The provider's one-pass foreground inspection (with the terminal's flags when asked). */
  inspectForeground(options?: InspectOptions): Promise<ForegroundFacts | undefined>
  /** Hand bytes to the PTY. */
  write(data: string): Promise<void>
  /** Deliver a real signal to the foreground group resolved at that moment. */
  signalForeground(signal: NodeJS.Signals): Promise<number>
  /** The session's output pipeline. */
  readonly stream: TerminalStream
  /** Top-level process status now. */
  status(): TerminalSessionStatus
  /** True once the top-level process was seen to exit. */
  exited(): boolean
  /** True once the session started closing (no more signals). */
  closing(): boolean
  /**
   * Called synchronously when `operation` settles, with what outlives it: the latest sample of the
   * prompt owner waiting when it ended on the prompt, the output that followed a `waitFor` match, and
   * what the terminal waited for then (its result's `input`, for the session's durable facts).
   */
  settled(
    operation: object,
    promptFacts: ForegroundFacts | undefined,
    afterMatch: SendOutputBuffer | undefined,
    settledInput: TerminalInputState | undefined,
  ): void
}

/** The timing rules of one send (the validated config fields). */
export interface SendTiming {
  /** Absolute bound from the start of the send. */
  readonly timeoutMs: number
  /** Silence after which the send settles as `inferred_idle`. */
  readonly idleSilenceMs: number
  /** Extra silence owed once a prompt marker was seen. */
  readonly handoffGraceMs: number
  /** Longest gap between probes; also how long weakly announced evidence must stand still. */
  readonly pollIntervalMs: number
  /** How long a cancelled send waits after its SIGINT for exact readiness. */
  readonly cancelGraceMs: number
}

/** How one send is started. */
export interface SendOptions {
  /**
   * Bytes to write (text plus Enter, or encoded keys); `undefined` writes nothing (startup, or an
   * empty send). "Input" alone means the terminal's input state (`TerminalInputState`), never these.
   */
  readonly bytes: string | undefined
  /** Startup: zero-output silence never counts, and a stdin wait counts only after output. */
  readonly startup?: boolean
  /** The caller's cancellation. */
  readonly signal?: AbortSignal | undefined
  /**
   * Output printed between the previous result and this send, shown first in its result; `firstLine`
   * is the 1-based scrollback number of its first line, when known exactly.
   */
  readonly earlier?: TerminalEarlierOutput | undefined
  /**
   * Where the result's screen comes from, for a send whose result may carry one (`showsScreen`), and
   * the source's count of row-changing moves when the send started.
   */
  readonly screen?: { readonly source: ScreenSource; readonly movesBefore: number } | undefined
  /** Silence alone may settle the send (`inferred_idle`); default true. */
  readonly settleOnSilence?: boolean | undefined
  /** Settle as `output_match` once output after the write matches; silence then settles only with `idleMs`. */
  readonly waitFor?: LinePattern | undefined
  /** The caller's own silence bound (already in `timing.idleSilenceMs`): with `waitFor`, silence still settles. */
  readonly idleMs?: number | undefined
  /** Timing rules. */
  readonly timing: SendTiming
  /** UTF-8 bytes of output kept between reads (and in the final viewport). */
  readonly maxBytes: number
  /**
   * The shell is known to sit idle at its prompt (the previous send ended on it; nothing arrived,
   * was written or signalled since): its latest sample, used instead of a pre-write inspection.
   */
  readonly promptFacts?: ForegroundFacts | undefined
  /**
   * A send without input reports the status of an own marker counted after this many (the stream's
   * count when the previous send settled: a command that ended between sends is the wait's to
   * report). Default: the count when the send starts. A send with input counts from its write.
   */
  readonly markersBefore?: number | undefined
}

/**
 * What a transition's guard reads of one send: the request's silence rules, the session's stream and
 * the latest judged sample. The send answers it itself, so a guard costs no object per event.
 */
export interface SendFacts {
  /** The request's rules for silence. */
  readonly options: Pick<SendOptions, 'settleOnSilence' | 'waitFor' | 'idleMs'>
  /** The session's output pipeline as it stands. */
  readonly stream: TerminalStream
  /** The latest judged foreground sample, if any. */
  readonly latestSample: ForegroundFacts | undefined
  /** Output arrivals when that sample started (-1 before the first). */
  readonly latestSampleArrivals: number
}

/**
 * The shell (or, at a REPL's marked prompt, that REPL) in front and waiting as far as the platform
 * can tell. A prompt that ended a send with such a sample — held still, or trusted in turn — leaves
 * it known idle for the next send.
 */
export function isPromptOwnerWaiting(facts: ForegroundFacts | undefined, screen: ScreenView): facts is ForegroundFacts {
  return facts !== undefined && ownsPrompt(facts, screen) && isStdinWaitProvenOrUnprovable(facts)
}

/**
 * Before the write the shell (or the REPL whose prompt is marked) sat at its prompt, in front and
 * proven blocked reading. A fresh inspection without that proof (macOS) does not make it idle: it
 * may still have input queued.
 */
export function isIdleAtPrompt(facts: ForegroundFacts | undefined, screen: ScreenView): boolean {
  return screen.promptKind !== undefined && facts !== undefined && ownsPrompt(facts, screen) && isStdinWaitProven(facts)
}

/**
 * Input typed ahead of a running command: before the write a job was in front (not the shell) and
 * proven not to read the terminal, so the input waits there until the shell reads it at its next
 * prompt. What is printed before that prompt is the running command's output, not the send's.
 */
export function isTypedAhead(facts: ForegroundFacts | undefined): boolean {
  return facts !== undefined && !facts.isShellGroup && facts.notReadingProven === true
}

/** Lines the input occupies once echoed: one, plus one per line break before its final Enter. */
export function lineCount(input: string): number {
  const body = input.endsWith('\r') ? input.slice(0, -1) : input
  return 1 + (body.match(/\r\n|[\r\n]/g)?.length ?? 0)
}

/** Input that ends at most one command line: no line break before the final Enter. */
export function isSingleLine(input: string): boolean {
  const body = input.endsWith('\r') ? input.slice(0, -1) : input
  return !/[\r\n]/.test(body)
}

/**
 * Whether silence says nothing about what is in front: a sample taken after the latest output
 * (`sampledAt` arrivals, `arrivalsNow` now) found every thread proven to be doing something other
 * than reading this terminal (a `sleep`, a build waiting for its children, a server in `accept`).
 * Such a program is not waiting for input, however long it stays quiet.
 */
export function isQuietButNotReading(facts: ForegroundFacts | undefined, sampledAt: number, arrivalsNow: number): boolean {
  return facts?.notReadingProven === true && sampledAt === arrivalsNow
}
