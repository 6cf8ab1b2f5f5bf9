import { join } from 'node:path'
import { errorMessage } from 'dsh-basics'
import type { TerminalSendResult, TerminalSendStart, TerminalSessionListener, TerminalSessionPublished, TerminalSessionStart } from 'dsh-terminal'
import { type AsciicastHeader, type EventCode, eventLine, headerLine, resizeData } from './asciicast'
import { recordingFileName } from './directory'
import { sendEndLabel, sendStartLabel, stoppedLabel } from './markers'
import { StreamRedactor } from './redaction'
import { MAX_PENDING_BYTES, RecordingFile } from './recording-file'

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
  /** Told once when the recording cannot be written (the recording then stops). */
  readonly onError: (message: string) => void
  /** Told when the recording's file is closed (or, never published, dropped). */
  readonly onClosed?: (recording: SessionRecording) => void
}

/**
 * One session's recording, as a listener of `ctx.terminals.observeSessions`: output, resizes and the
 * agent's input as asciicast events, a marker at each send's start and end. Everything arrives
 * synchronously on the session's path and is only encoded and queued here; {@link RecordingFile}
 * writes it. Events before the session is published wait for the header (which needs the size).
 * Input to a password prompt and a person's typing become placeholders; values the environment
 * scrub drops become `[redacted]`. Past `maxBytes` (or when the disk falls 8 MiB behind) a marker says
 * the recording stopped, and nothing more is written.
 */
export class SessionRecording implements TerminalSessionListener {
  readonly #start: TerminalSessionStart
  readonly #options: RecordingOptions
  readonly #startedAt = performance.now()
  readonly #decoder = new TextDecoder('utf-8')
  readonly #redactor: StreamRedactor
  readonly #file: RecordingFile
  /** Lines waiting for the header; undefined once it was written. */
  #early: string[] | undefined = []
  /** Bytes the file will hold, counting the header's allowance until it is known. */
  #bytes: number
  readonly #headerAllowance: number
  #stopped = false
  #closed: Promise<void> | undefined
  /** The latest event is a person's placeholder: more typing in the same stretch adds none. */
  #personNoted = false

  constructor(start: TerminalSessionStart, options: RecordingOptions) {
    this.#start = start
    this.#options = options
    this.#redactor = new StreamRedactor(options.secrets)
    this.#file = new RecordingFile(join(options.directory, recordingFileName(start.startedAt, start.sessionId, options.hostPid)), (error) =>
      this.#fail(error),
    )
    // The header is written once the size is known; until then the largest it can be is counted.
    this.#headerAllowance = Buffer.byteLength(headerLine(this.#header({ size: { cols: 1000, rows: 500 }, term: 'x'.repeat(64) })))
    this.#bytes = this.#headerAllowance
  }

  /** The file this recording writes (it exists once the session was published). */
  get path(): string {
    return this.#file.path
  }

  /** Settles once the file is complete, after the session ended; `undefined` while it still records. */
  get closed(): Promise<void> | undefined {
    return this.#closed
  }

  published(session: TerminalSessionPublished): void {
    const early = this.#early
    if (early === undefined || this.#closed) return
    this.#early = undefined
    const header = headerLine(this.#header(session))
    const headerBytes = Buffer.byteLength(header)
    this.#bytes += headerBytes - this.#headerAllowance
    this.#file.append(header, headerBytes)
    for (const line of early) this.#file.append(line, Buffer.byteLength(line))
  }

  output(bytes: Uint8Array): void {
    if (this.#stopped) return
    const text = this.#decoder.decode(this.#redactor.push(bytes), { stream: true })
    if (text !== '') this.#emit('o', text)
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
    if (!this.#stopped) {
      const rest = this.#decoder.decode(this.#redactor.flush())
      if (rest !== '') this.#emit('o', rest)
      if (reason !== undefined) this.#stop(reason)
    }
    this.#stopped = true
    const closing = this.#early === undefined ? this.#file.close() : Promise.resolve()
    this.#early = undefined
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
    const line = eventLine(this.#seconds(), code, data)
    const bytes = Buffer.byteLength(line)
    if (this.#bytes + bytes > this.#options.maxBytes - STOP_RESERVE_BYTES) {
      return this.#stop(`maxBytesPerSession (${this.#options.maxBytes} bytes) reached`)
    }
    if (this.#file.pendingBytes + bytes > MAX_PENDING_BYTES) {
      return this.#stop(`the disk fell more than ${MAX_PENDING_BYTES} bytes behind`)
    }
    this.#append(line, bytes)
  }

  /** Record why the recording ends early (the marker fits in {@link STOP_RESERVE_BYTES}); nothing is recorded after it. */
  #stop(reason: string): void {
    if (this.#stopped) return
    this.#stopped = true
    const line = eventLine(this.#seconds(), 'm', stoppedLabel(reason).slice(0, STOP_RESERVE_BYTES / 4))
    this.#append(line, Buffer.byteLength(line))
  }

  #append(line: string, bytes: number): void {
    this.#bytes += bytes
    if (this.#early) this.#early.push(line)
    else this.#file.append(line, bytes)
  }

  #fail(error: unknown): void {
    this.#stopped = true
    this.#options.onError(`the recording of ${this.#start.sessionId} stopped: ${this.#file.path} could not be written (${errorMessage(error)})`)
  }

  #seconds(): number {
    return (performance.now() - this.#startedAt) / 1000
  }
}
