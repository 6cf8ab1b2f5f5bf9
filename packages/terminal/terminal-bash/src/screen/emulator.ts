import serialize from '@xterm/addon-serialize'
import unicode11 from '@xterm/addon-unicode11'
import xterm from '@xterm/headless'
import type { TerminalScreen, TerminalSize } from 'dsh-terminal'
import type { KeyModes } from '../input/send-input'
import { EmulatorGuard } from './emulator-guard'
import { MAX_PIECE_WORK } from './emulator-rules'
import { renderScreen } from './screen-render'

const { Terminal } = xterm

/**
 * Most bytes the emulator may hold unparsed. It parses far faster than a PTY delivers, so in
 * practice its backlog stays tens of KiB; past this (the event loop starved, e.g. by many floods at
 * once) the model parses in the write path until it is back under the bound. Reading the PTY then
 * waits, and the kernel makes the printing program wait in turn: nothing is dropped, nothing grows.
 */
export const MAX_UNPARSED_BYTES = 1024 * 1024

/**
 * Most emulator work (in cells, as the {@link EmulatorGuard} estimates it) the backlog may hold
 * beyond its bytes: tens of ms of parsing. A few bytes can cost a whole screen (`ESC # 8`, `CSI 40 L`),
 * so a flood of such sequences reaches this bound long before the byte bound, and is pushed back
 * the same way.
 */
export const MAX_UNPARSED_WORK = 4 * MAX_PIECE_WORK

/** Most backlog {@link Emulator.parseSmallBacklog} parses at once: a few ms of xterm's time at worst. */
export const SYNC_PARSE_BYTES = 64 * 1024

/** The colours a query for the default foreground (OSC 10) and background (OSC 11) is answered with: a dark terminal. */
const DEFAULT_COLORS: ReadonlyMap<number, string> = new Map([
  [10, 'rgb:ffff/ffff/ffff'],
  [11, 'rgb:0000/0000/0000'],
])

/**
 * Give `terminal` Unicode 11 widths (xterm's default table is Unicode 6): emoji such as 🚀 ⚡ ✅
 * then take two columns and U+200B none, as bash, tmux and ncurses count them, so the screen shows
 * the command line bash edits. The line view counts with the same table (`output/width.ts`).
 */
export function useUnicode11(terminal: InstanceType<typeof Terminal>): void {
  terminal.loadAddon(new unicode11.Unicode11Addon() as unknown as Parameters<InstanceType<typeof Terminal>['loadAddon']>[0])
  terminal.unicode.activeVersion = '11'
}

/** What an {@link Emulator} needs from its session. */
export interface EmulatorOptions {
  /** The window size the session starts with. */
  readonly size: TerminalSize
  /**
   * Writes the emulator's answers to terminal queries (cursor position, device attributes) to the
   * PTY, in the order they were produced. Never called after {@link Emulator.dispose}.
   */
  readonly reply: (data: string) => void
}

/**
 * A headless xterm behind the {@link EmulatorGuard}, sized like the PTY, fed the bytes the session's
 * `ScreenModel` hands it (which decides when). It answers the queries programs ask a terminal
 * (without answers vim waits, then drops typeahead), knows the input modes keys are encoded for,
 * and renders what a person would see. It keeps no scrollback of its own: the line ring is the history.
 *
 * xterm parses asynchronously, in slices between other work; every chunk's write callback counts
 * it as parsed, so a snapshot waits exactly for the bytes that arrived before it was asked for.
 */
export class Emulator {
  readonly #terminal: InstanceType<typeof Terminal>
  /** Clamps what the program printed before the emulator acts on it (see {@link EmulatorGuard}). */
  readonly #guard: EmulatorGuard
  readonly #reply: (data: string) => void
  #size: TerminalSize
  #title: string | undefined
  /** Loaded the first time a person attaches: most sessions are never watched. */
  #serializer: InstanceType<typeof serialize.SerializeAddon> | undefined
  /** Bytes handed to the emulator whose write callback has not run yet. */
  #unparsedBytes = 0
  /** The guard's work estimate of those bytes' sequences. */
  #unparsedWork = 0
  /** Writes (chunks, resizes, snapshot marks) handed over and not yet reached by the parser. */
  #unparsedWrites = 0
  #disposed = false

  /** An emulator of `options.size` with nothing printed yet. */
  constructor(options: EmulatorOptions) {
    this.#size = { rows: options.size.rows, cols: options.size.cols }
    this.#reply = options.reply
    this.#guard = new EmulatorGuard(this.#size)
    this.#terminal = new Terminal({
      rows: this.#size.rows,
      cols: this.#size.cols,
      scrollback: 0,
      // `buffer` (reading the screen) is a proposed API in the headless build.
      allowProposedApi: true,
      logLevel: 'off',
      // The size report in characters (`CSI 18 t`) and the title stack; nothing that moves a window.
      windowOptions: { getWinSizeChars: true, pushTitle: true, popTitle: true },
    })
    useUnicode11(this.#terminal)
    for (const [ident, color] of DEFAULT_COLORS) {
      this.#terminal.parser.registerOscHandler(ident, (data) => {
        if (data !== '?') return false
        if (!this.#disposed) this.#reply(`\x1b]${ident};${color}\x1b\\`)
        return true
      })
    }
    this.#terminal.onData((data) => {
      if (!this.#disposed) this.#reply(data)
    })
    this.#terminal.onTitleChange((title) => {
      this.#title = title === '' ? undefined : title
    })
  }

  /** The window size programs draw for: the latest {@link Emulator.resize}, even before earlier output is parsed. */
  get size(): TerminalSize {
    return this.#size
  }

  /** Bytes handed over and not yet parsed (the emulator's backlog). */
  get unparsedBytes(): number {
    return this.#unparsedBytes
  }

  /** The guard's estimate of the emulator work those bytes still cost, in cells (bounded by {@link MAX_UNPARSED_WORK}). */
  get unparsedWork(): number {
    return this.#unparsedWork
  }

  /**
   * The input modes programs set (keys and pastes are encoded for them), after every byte handed
   * over: a backlog (e.g. the prompt that just settled a send, with bash's `CSI ? 2004 h`) is parsed
   * first, at once.
   */
  get modes(): KeyModes {
    this.#parseWhile(
      () => this.#unparsedWrites > 0,
      () => this.#unparsedWrites,
    )
    const { applicationCursorKeysMode, applicationKeypadMode, bracketedPasteMode } = this.#terminal.modes
    return { applicationCursorKeys: applicationCursorKeysMode, applicationKeypad: applicationKeypadMode, bracketedPaste: bracketedPasteMode }
  }

  /**
   * Parse the backlog now, in this turn, when it is small (at most {@link SYNC_PARSE_BYTES} and one
   * piece of work): a screen asked for after output that waited costs no timer round; a larger
   * backlog is left to xterm's sliced parse, so other sessions run between its slices.
   */
  parseSmallBacklog(): void {
    if (this.#unparsedBytes > SYNC_PARSE_BYTES || this.#unparsedWork > MAX_PIECE_WORK) return
    this.#parseWhile(
      () => this.#unparsedWrites > 0,
      () => this.#unparsedWrites,
    )
  }

  /**
   * Take one raw chunk of PTY output, in arrival order; the emulator gets it through the guard.
   * Ignored after {@link Emulator.dispose}.
   */
  write(bytes: Uint8Array): void {
    if (this.#disposed || bytes.length === 0) return
    this.#guard.write(bytes, this.#handPiece)
    if (this.#overBacklog())
      this.#parseWhile(
        () => this.#overBacklog(),
        () => this.#unparsedBytes + this.#unparsedWork,
      )
  }

  /** Whether the backlog passed either bound: its bytes or its estimated work. */
  #overBacklog(): boolean {
    return this.#unparsedBytes > MAX_UNPARSED_BYTES || this.#unparsedWork > MAX_UNPARSED_WORK
  }

  /** The guard's sink, made once: a chunk must not allocate a closure on the output path. */
  readonly #handPiece = (piece: Uint8Array, work: number): void => this.#hand(piece, work)

  /** One guarded piece to the emulator's queue: xterm parses a piece without a break and yields between pieces. */
  #hand(piece: Uint8Array, work: number): void {
    const length = piece.length
    this.#unparsedBytes += length
    this.#unparsedWork += work
    this.#unparsedWrites += 1
    this.#terminal.write(piece, () => {
      this.#unparsedBytes -= length
      this.#unparsedWork -= work
      this.#unparsedWrites -= 1
    })
  }

  /** Parse slices of the backlog now, in order, while `wanted` holds and each slice shrinks `backlog`. */
  #parseWhile(wanted: () => boolean, backlog: () => number): void {
    let before = backlog()
    while (wanted() && parseSliceNow(this.#terminal)) {
      // A slice that parsed nothing (an internal that changed) must not spin.
      if (backlog() >= before) return
      before = backlog()
    }
  }

  /**
   * Follow a PTY resize. Output already handed over was drawn for the old size, so the emulator
   * resizes once it has parsed that, exactly where the PTY changed size in the byte stream.
   */
  resize(size: TerminalSize): void {
    if (this.#disposed) return
    this.#size = { rows: size.rows, cols: size.cols }
    this.#guard.resize(this.#size)
    const { rows, cols } = this.#size
    this.#afterParsed(() => {
      if (this.#terminal.rows !== rows || this.#terminal.cols !== cols) this.#terminal.resize(cols, rows)
    })
  }

  /** What the terminal shows once every byte handed over before this call is parsed. */
  snapshot(): Promise<TerminalScreen> {
    if (this.#disposed) return Promise.reject(new Error('the screen model is disposed'))
    return new Promise((resolve) => this.#afterParsed(() => resolve(renderScreen(this.#terminal, this.#title))))
  }

  /**
   * The screen once every byte handed over before this call is parsed, as terminal output that
   * redraws it on a cleared terminal of {@link Emulator.size}: text, colours, the alternate
   * screen, the cursor and the input modes. What a person attaching sees first.
   */
  replay(): Promise<string> {
    if (this.#disposed) return Promise.reject(new Error('the screen model is disposed'))
    return new Promise((resolve) =>
      this.#afterParsed(() => {
        if (!this.#serializer) {
          this.#serializer = new serialize.SerializeAddon()
          // The addon is typed against the browser build; the headless terminal has the same API.
          this.#terminal.loadAddon(this.#serializer as unknown as Parameters<InstanceType<typeof Terminal>['loadAddon']>[0])
        }
        resolve(this.#serializer.serialize({ scrollback: 0 }))
      }),
    )
  }

  /** Stop answering queries and free xterm (once what it was handed is parsed, so pending snapshots still settle). */
  dispose(): void {
    if (this.#disposed) return
    this.#disposed = true
    this.#afterParsed(() => this.#terminal.dispose())
  }

  /** Run `action` at once when nothing waits to be parsed, else right after what was handed over so far. */
  #afterParsed(action: () => void): void {
    if (this.#unparsedWrites === 0) return action()
    this.#unparsedWrites += 1
    this.#terminal.write('', () => {
      this.#unparsedWrites -= 1
      action()
    })
  }
}

/**
 * Run one slice (about 12 ms) of xterm's own parse loop now instead of on its next timer: the
 * same code, order and write callbacks, only sooner. xterm has no public way to do this; its
 * internals are reached with a check, so a version without them leaves the backlog to xterm.
 */
function parseSliceNow(terminal: InstanceType<typeof Terminal>): boolean {
  const queue = (terminal as unknown as { _core?: { _writeBuffer?: { _innerWrite?: () => void } } })._core?._writeBuffer
  if (typeof queue?._innerWrite !== 'function') return false
  queue._innerWrite()
  return true
}
