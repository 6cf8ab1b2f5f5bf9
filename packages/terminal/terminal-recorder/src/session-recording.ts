import { join } from 'node:path'
import type { TerminalSendResult, TerminalSendStart, TerminalSessionListener, TerminalSessionPublished, TerminalSessionStart } from 'dsh-terminal'
import { type AsciicastHeader, type EventCode, headerLine, resizeData } from './asciicast'
import { recordingFileName } from './directory'
import { sendEndLabel, sendStartLabel } from './markers'
import { StreamRedactor } from './redaction'
import { MAX_PENDING_BYTES, type RecordingChannel, type WriterThread } from './writer-thread'

/** The `i` event that stands for the agent's input to a password prompt (`read -s`, sudo, ssh): never the text. */
export const SECRET_INPUT_PLACEHOLDER = '[input not recorded: the terminal asked for a password]'

/** The `i` event that stands for what a person attached to the session typed (the secret handoff): never the text. */
export const PERSON_INPUT_PLACEHOLDER = '[input not recorded: typed by a person]'

/** Bytes kept back from `maxBytesPerSession` for the marker that says the recording stopped. */
export const STOP_RESERVE_BYTES = 512

/** The window size a recording's header gives a session whose backend has no terminal. */
const NO_TERMINAL_SIZE = { cols: 80, rows: 24 }

/** What every recording of one recorder shares. */
export interface RecordingOptions {
  /** The private directory the file goes to. */
  readonly directory: string
  /** The most bytes one file may hold, header and stop marker included. */
  readonly maxBytes: number
  /** Values to replace with `[redacted]` wherever they appear (what the environment scrub drops). */
  readonly secrets: readonly string[]
  /** The host's pid, part of the file name. */
  readonly hostPid: number
  /** The thread that encodes and writes. */
  readonly writer: WriterThread
  /** Told once when the recording cannot be written (the recording then stops). */
  readonly onError: (message: string) => void
  /** Told when the recording's file is closed (or, never published, dropped). */
  readonly onClosed?: (recording: SessionRecording) => void
}

/** An event that arrived before the header could be written. */
type EarlyEvent = { seconds: number; code: EventCode; data: string | Uint8Array }

/**
 * One session's recording, as a listener of `ctx.terminals.observeSessions`: output, resizes and the
 * agent's input as asciicast events, a marker at each send's start and end. Everything arrives
 * synchronously on the session's path and is only stamped and queued here; the writer thread
 * decodes, escapes, counts `maxBytes` and writes. Events before the session is published wait for
 * the header (which needs the size). Input to a password prompt and a person's typing become
 * placeholders; values the environment scrub drops become `[redacted]`. Past `maxBytes` (or when
 * the writer falls 8 MiB behind) a marker says the recording stopped, and nothing more is written.
 */
export class SessionRecording implements TerminalSessionListener {
  readonly #start: TerminalSessionStart
  readonly #options: RecordingOptions
  readonly #startedAt = performance.now()
  readonly #redactor: StreamRedactor
  readonly #path: string
  #channel: RecordingChannel | undefined
  /** Events waiting for the header; undefined once it was written. */
  #early: EarlyEvent[] | undefined = []
  #stopped = false
  #closed: Promise<void> | undefined
  /** The latest event is a person's placeholder: more typing in the same stretch adds none. */
  #personNoted = false

  constructor(start: TerminalSessionStart, options: RecordingOptions) {
    this.#start = start
    this.#options = options
    this.#redactor = new StreamRedactor(options.secrets)
    this.#path = join(options.directory, recordingFileName(start.startedAt, start.sessionId, options.hostPid))
  }

  /** The file this recording writes (it exists once the session was published). */
  get path(): string {
    return this.#path
  }

  /** Settles once the file is complete, after the session ended; `undefined` while it still records. */
  get closed(): Promise<void> | undefined {
    return this.#closed
  }

  published(session: TerminalSessionPublished): void {
    const early = this.#early
    if (early === undefined || this.#closed) return
    this.#early = undefined
    const channel = this.#options.writer.open(
      { path: this.#path, header: headerLine(this.#header(session)), maxBytes: this.#options.maxBytes, reserve: STOP_RESERVE_BYTES },
      {
        onStopped: () => {
          this.#stopped = true
        },
        onError: (message) => {
          this.#stopped = true
          this.#options.onError(`the recording of ${this.#start.sessionId} stopped: ${this.#path}: ${message}`)
        },
      },
    )
    this.#channel = channel
    for (const event of early) {
      if (typeof event.data === 'string') channel.event(event.seconds, event.code, event.data)
      else channel.output(event.seconds, event.data)
    }
  }

  output(bytes: Uint8Array): void {
    if (this.#stopped) return
    const safe = this.#redactor.push(bytes)
    if (safe.length === 0) return
    const channel = this.#channel
    if (!channel) return void this.#early?.push({ seconds: this.#seconds(), code: 'o', data: safe })
    if (this.#fellBehind(channel, safe.length)) return
    channel.output(this.#seconds(), safe)
  }

  sendStarted(send: TerminalSendStart): void {
    if (this.#stopped) return
    this.#personNoted = false
    this.#emit('m', sendStartLabel(send))
    if (send.size) this.#emit('r', resizeData(send.size))
    const typed = send.keys ? send.keys.map((key) => `<${key}>`).join('') : send.text + (send.submit ? '\r' : '')
    if (typed === '') return
    this.#emit('i', send.inputBefore?.kind === 'password' ? SECRET_INPUT_PLACEHOLDER : this.#redactor.redactText(typed))
  }

  sendSettled(send: TerminalSendStart, result: TerminalSendResult | undefined): void {
    if (this.#stopped) return
    this.#personNoted = false
    this.#emit('m', sendEndLabel(send, result))
  }

  personTyped(): void {
    if (this.#stopped || this.#personNoted) return
    this.#personNoted = true
    this.#emit('i', PERSON_INPUT_PLACEHOLDER)
  }

  ended(): void {
    void this.close()
  }

  /**
   * Write what is held back and close the file; `reason`, when given, is recorded as a stop marker
   * first (the recorder unloads while the session runs). A session never published leaves no file.
   */
  close(reason?: string): Promise<void> {
    if (this.#closed) return this.#closed
    const rest = this.#redactor.flush()
    const channel = this.#channel
    if (channel && !this.#stopped && rest.length > 0) channel.output(this.#seconds(), rest)
    this.#stopped = true
    this.#early = undefined
    const closing = channel ? channel.close(this.#seconds(), reason) : Promise.resolve()
    this.#closed = closing.then(() => this.#options.onClosed?.(this))
    return this.#closed
  }

  #header(session: TerminalSessionPublished): AsciicastHeader {
    const size = session.size ?? NO_TERMINAL_SIZE
    const { sessionId, name } = this.#start
    const header = {
      version: 2 as const,
      width: size.cols,
      height: size.rows,
      timestamp: Math.floor(this.#start.startedAt / 1000),
      title: name === undefined ? `dsh-terminal ${sessionId}` : `dsh-terminal ${sessionId} (${name})`,
    }
    return session.term === undefined ? header : { ...header, env: { TERM: session.term } }
  }

  #emit(code: EventCode, data: string): void {
    const channel = this.#channel
    if (!channel) return void this.#early?.push({ seconds: this.#seconds(), code, data })
    if (this.#fellBehind(channel, data.length)) return
    channel.event(this.#seconds(), code, data)
  }

  /** The writer is more than {@link MAX_PENDING_BYTES} behind: stop (with a marker) rather than hold more. */
  #fellBehind(channel: RecordingChannel, bytes: number): boolean {
    if (channel.pendingBytes + bytes <= MAX_PENDING_BYTES) return false
    this.#stopped = true
    channel.stop(this.#seconds(), `the writer fell more than ${MAX_PENDING_BYTES} bytes behind`)
    return true
  }

  #seconds(): number {
    return (performance.now() - this.#startedAt) / 1000
  }
}
