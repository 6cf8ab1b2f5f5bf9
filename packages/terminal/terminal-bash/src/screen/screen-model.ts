import { Buffer } from 'node:buffer'
import type { TerminalScreen, TerminalSize } from 'dsh-terminal'
import { DEFAULT_KEY_MODES, type KeyModes } from '../input/send-input'
import { Emulator } from './emulator'
import { PendingOutput } from './pending-output'
import { OutputWatch } from './output-watch'

export { MAX_UNPARSED_BYTES, MAX_UNPARSED_WORK } from './emulator'

/**
 * Most bytes of output held for the emulator while it sleeps. The screen shows the last rows of
 * what was printed, and 256 KiB of line output holds far more rows than a screen; past the bound the
 * oldest output is dropped and the screen is rebuilt from what is left (see {@link ScreenModel}), so a flood nobody looks at costs neither parsing nor memory.
 */
export const MAX_REPLAY_BYTES = 256 * 1024

/** What a {@link ScreenModel} needs from its session. */
export interface ScreenModelOptions {
  /** The window size the session starts with. */
  readonly size: TerminalSize
  /**
   * Writes the emulator's answers to terminal queries (cursor position, device attributes) to the
   * PTY, in the order they were produced. Never called after {@link ScreenModel.dispose}.
   */
  readonly reply: (data: string) => void
}

/**
 * One session's screen, paid for only when it is used. The emulator (a headless xterm, see
 * {@link Emulator}) parses the output while a full-screen program holds the terminal (the caller
 * says so with every chunk) and whenever a chunk asks the terminal something ({@link OutputWatch}:
 * the program waits for the answer). Otherwise output waits, unparsed, until someone needs the
 * screen: a snapshot, a person's view, the key modes of a send. The screen is a function of the
 * bytes, so parsing them late renders the same screen, and the emulator is created on first need.
 * What waits is bounded by {@link MAX_REPLAY_BYTES}: beyond it the oldest output is dropped, and the
 * next need starts a fresh emulator with the settings the watch kept (title, key modes), at the first
 * chunk left that starts outside any sequence. That rebuild is exact for line output (the screen's
 * rows are the last lines); it is approximate where output on the normal screen moved the cursor
 * across more than the bound, and for other state set in the dropped part (colours, scroll region).
 */
export class ScreenModel {
  readonly #reply: (data: string) => void
  readonly #watch = new OutputWatch()
  readonly #pending = new PendingOutput(MAX_REPLAY_BYTES)
  #emulator: Emulator | undefined
  #size: TerminalSize
  #disposed = false

  /** A screen of `options.size` with nothing printed yet; no emulator exists until one is needed. */
  constructor(options: ScreenModelOptions) {
    this.#size = { rows: options.size.rows, cols: options.size.cols }
    this.#reply = options.reply
    this.#pending.resetTo(this.#size)
  }

  /** The window size programs draw for: the latest {@link ScreenModel.resize}, even before earlier output is parsed. */
  get size(): TerminalSize {
    return this.#size
  }

  /** Bytes handed to the emulator and not yet parsed (its backlog). */
  get unparsedBytes(): number {
    return this.#emulator?.unparsedBytes ?? 0
  }

  /** The guard's estimate of the emulator work those bytes still cost, in cells. */
  get unparsedWork(): number {
    return this.#emulator?.unparsedWork ?? 0
  }

  /** Bytes of output waiting for the emulator (at most about {@link MAX_REPLAY_BYTES}). */
  get waitingBytes(): number {
    return this.#pending.bytes
  }

  /** Whether an emulator exists: one was needed since the session started. */
  get emulating(): boolean {
    return this.#emulator !== undefined
  }

  /**
   * The input modes programs set (keys and pastes are encoded for them), after every byte that
   * arrived: waiting output is parsed first, at once.
   */
  get modes(): KeyModes {
    if (this.#disposed) return DEFAULT_KEY_MODES
    return this.#caughtUp(false).modes
  }

  /**
   * Take one raw chunk of PTY output, in arrival order. `keepUp`: a full-screen program holds the
   * terminal after this chunk, so the emulator parses it now. Ignored after {@link ScreenModel.dispose}.
   */
  write(bytes: Uint8Array, keepUp: boolean): void {
    if (this.#disposed || bytes.length === 0) return
    const asks = this.#watch.scan(bytes)
    const emulator = this.#emulator
    if (emulator && this.#pending.empty && (keepUp || asks)) return emulator.write(bytes)
    this.#pending.push(bytes, this.#watch.groundFrom)
    if (keepUp || asks) this.#caughtUp(false)
  }

  /**
   * Follow a PTY resize. Output that arrived before was drawn for the old size, so the emulator
   * resizes exactly where the PTY changed size in the byte stream.
   */
  resize(size: TerminalSize): void {
    if (this.#disposed) return
    this.#size = { rows: size.rows, cols: size.cols }
    if (this.#pending.empty) this.#emulator?.resize(this.#size)
    this.#pending.resize(this.#size)
  }

  /** What the terminal shows once every byte that arrived before this call is parsed. */
  snapshot(): Promise<TerminalScreen> {
    if (this.#disposed) return Promise.reject(new Error('the screen model is disposed'))
    return this.#caughtUp(true).snapshot()
  }

  /**
   * The screen once every byte that arrived before this call is parsed, as terminal output that
   * redraws it on a cleared terminal of {@link ScreenModel.size} (see {@link Emulator.replay}).
   */
  replay(): Promise<string> {
    if (this.#disposed) return Promise.reject(new Error('the screen model is disposed'))
    return this.#caughtUp(true).replay()
  }

  /** Stop answering queries and free the emulator (once what it was handed is parsed, so pending snapshots still settle). */
  dispose(): void {
    if (this.#disposed) return
    this.#disposed = true
    this.#pending.resetTo(this.#size)
    this.#emulator?.dispose()
  }

  /**
   * The emulator with every waiting chunk and resize handed over, in order; created on first need.
   * After output was dropped, a fresh one starts with the kept settings, then what is left.
   * `parseNow`: what was handed is parsed in this turn when it is small (a screen is being asked for).
   */
  #caughtUp(parseNow: boolean): Emulator {
    const { entries, size, dropped } = this.#pending.take(this.#size)
    if (dropped) {
      this.#emulator?.dispose()
      this.#emulator = undefined
    }
    let emulator = this.#emulator
    if (!emulator) {
      emulator = new Emulator({ size, reply: this.#reply })
      this.#emulator = emulator
      if (dropped) emulator.write(Buffer.from(this.#watch.settings.preamble(), 'utf8'))
    }
    // The size the waiting output was laid out for (a resize while nothing could be kept only reached the queue).
    if (emulator.size.rows !== size.rows || emulator.size.cols !== size.cols) emulator.resize(size)
    for (const entry of entries) {
      if (entry instanceof Uint8Array) emulator.write(entry)
      else emulator.resize(entry)
    }
    if (parseNow && entries.length > 0) emulator.parseSmallBacklog()
    return emulator
  }
}
