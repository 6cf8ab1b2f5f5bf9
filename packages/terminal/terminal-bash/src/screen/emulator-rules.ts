/**
 * The rules of the emulator guard (`emulator-guard.ts`), in one place: which sequences have their
 * numeric parameters clamped to the screen, how much emulator work each costs, and how long a
 * sequence or a control string may be. Each row says why; the behaviour cited is @xterm/headless
 * 6.0.0's (`InputHandler`, `EscapeSequenceParser`, `Params`), which the clamps keep identical.
 */
import type { TerminalSize } from 'dsh-terminal'

/** Rewrites one parameter's value (never below 0) given the screen size; returns it unchanged when in range. */
export type ParameterLimit = (value: number, size: TerminalSize) => number

/** One CSI sequence the guard knows: its identifier, the limits of its parameters, its cost. */
export interface CsiRule {
  /** Mnemonic, e.g. `IL`. */
  readonly name: string
  /** Intermediate bytes between the parameters and the final (`' '` for SL/SR), no prefix: xterm's identifier. */
  readonly intermediates: string
  /** The final byte. */
  readonly final: string
  /** Limit per parameter position (index 0 = first parameter); positions without one pass as sent. */
  readonly limits: readonly (ParameterLimit | undefined)[]
  /** Emulator work of one dispatch, in cells, from the first parameter after clamping (0 = default). */
  readonly work: (first: number, size: TerminalSize) => number
  /** Why the limit keeps xterm's result, or why the cost is what it is. */
  readonly why: string
}

/** An ESC sequence with no parameters that still costs the whole screen. */
export interface EscRule {
  /** Mnemonic. */
  readonly name: string
  /** Intermediate bytes (`#` for DECALN). */
  readonly intermediates: string
  /** The final byte. */
  readonly final: string
  /** Emulator work of one dispatch, in cells. */
  readonly work: (size: TerminalSize) => number
  /** Why it counts. */
  readonly why: string
}

/** Rows: a larger count acts on every row of the region, exactly as this many does. */
const rows: ParameterLimit = (value, size) => Math.min(value, size.rows)
/** Columns: likewise for cells of a row. */
const cols: ParameterLimit = (value, size) => Math.min(value, size.cols)
/**
 * REP: up to a screen plus a row the count is kept (nothing a program draws repeats more); beyond it
 * only the count modulo a row is kept on top of that. Every row is then the character in both cases
 * and the cursor ends in the same column (for a one-column character; see the README's limits).
 */
const repeat: ParameterLimit = (value, size) => {
  const full = size.rows * size.cols + size.cols
  return value <= full ? value : full + ((value - full) % size.cols)
}
/** The count with xterm's default (0 and missing mean 1). */
const count = (value: number): number => Math.max(value, 1)
const screen = (size: TerminalSize): number => size.rows * size.cols
const none = (): number => 0

/**
 * The CSI sequences whose parameters are clamped or whose dispatch costs more than its bytes.
 * Sequences with a `?`/`>`/`<`/`=` prefix never match (xterm dispatches those elsewhere).
 */
export const CSI_RULES: readonly CsiRule[] = [
  {
    name: 'ICH',
    intermediates: '',
    final: '@',
    limits: [cols],
    work: none,
    why: 'inserts Ps blanks: at least the rest of the row fills the row with blanks, the same as cols',
  },
  {
    name: 'CUU',
    intermediates: '',
    final: 'A',
    limits: [rows],
    work: none,
    why: 'moves up, stopped at the top margin or row 1: rows moves as far as any larger count',
  },
  { name: 'CUD', intermediates: '', final: 'B', limits: [rows], work: none, why: 'moves down, stopped at the bottom margin or last row' },
  { name: 'CUF', intermediates: '', final: 'C', limits: [cols], work: none, why: 'moves right, stopped at the last column' },
  { name: 'CUB', intermediates: '', final: 'D', limits: [cols], work: none, why: 'moves left, stopped at column 1' },
  { name: 'CNL', intermediates: '', final: 'E', limits: [rows], work: none, why: 'CUD, then column 1' },
  { name: 'CPL', intermediates: '', final: 'F', limits: [rows], work: none, why: 'CUU, then column 1' },
  { name: 'CHA', intermediates: '', final: 'G', limits: [cols], work: none, why: 'column Ps, clamped by xterm to the last column' },
  {
    name: 'CUP',
    intermediates: '',
    final: 'H',
    limits: [rows, cols],
    work: none,
    why: 'row;column, each clamped by xterm to the screen (or the margins in origin mode)',
  },
  {
    name: 'CHT',
    intermediates: '',
    final: 'I',
    limits: [cols],
    work: (first) => count(first) * 4,
    why: 'xterm loops Ps times over the tab stops (2^31 loops for a huge count); after cols steps the cursor sits on the last column',
  },
  {
    name: 'IL',
    intermediates: '',
    final: 'L',
    limits: [rows],
    work: (first, size) => 2 * count(first) * (size.rows + size.cols),
    why: 'xterm loops Ps times (a row splice and a new blank row each): rows blanks the whole region already',
  },
  {
    name: 'DL',
    intermediates: '',
    final: 'M',
    limits: [rows],
    work: (first, size) => 2 * count(first) * (size.rows + size.cols),
    why: 'likewise, deleting rows',
  },
  { name: 'DCH', intermediates: '', final: 'P', limits: [cols], work: none, why: 'deletes Ps cells: at least the rest of the row blanks it, the same as cols' },
  {
    name: 'SU',
    intermediates: '',
    final: 'S',
    limits: [rows],
    work: (first, size) => 2 * count(first) * (size.rows + size.cols),
    why: 'xterm loops Ps times; rows scrolls every row of the region out already',
  },
  { name: 'SD', intermediates: '', final: 'T', limits: [rows], work: (first, size) => 2 * count(first) * (size.rows + size.cols), why: 'likewise, downwards' },
  { name: 'ECH', intermediates: '', final: 'X', limits: [cols], work: none, why: 'erases Ps cells, stopped at the end of the row' },
  {
    name: 'CBT',
    intermediates: '',
    final: 'Z',
    limits: [cols],
    work: (first) => count(first) * 4,
    why: 'xterm loops Ps times over the tab stops; after cols steps the cursor sits on column 1',
  },
  { name: 'HPA', intermediates: '', final: '`', limits: [cols], work: none, why: 'CHA' },
  { name: 'HPR', intermediates: '', final: 'a', limits: [cols], work: none, why: 'CUF' },
  {
    name: 'REP',
    intermediates: '',
    final: 'b',
    limits: [repeat],
    work: (first) => 6 * count(first),
    why: 'xterm prints the preceding character Ps times (a 4·Ps-byte array first): see `repeat` above',
  },
  { name: 'VPA', intermediates: '', final: 'd', limits: [rows], work: none, why: 'row Ps, clamped by xterm to the last row' },
  { name: 'VPR', intermediates: '', final: 'e', limits: [rows], work: none, why: 'CUD without the margin stop, clamped to the last row' },
  { name: 'HVP', intermediates: '', final: 'f', limits: [rows, cols], work: none, why: 'CUP' },
  {
    name: 'DECSTBM',
    intermediates: '',
    final: 'r',
    limits: [rows, rows],
    work: none,
    why: 'xterm reads a bottom past the last row as the last row, and a top at or past it as no region: rows keeps both',
  },
  { name: 'ED', intermediates: '', final: 'J', limits: [], work: (_first, size) => screen(size), why: 'no count, but erasing the display touches every cell' },
  {
    name: 'SL',
    intermediates: ' ',
    final: '@',
    limits: [cols],
    work: (_first, size) => screen(size),
    why: 'shifts every row of the region left by Ps: cols blanks them, the same as more',
  },
  { name: 'SR', intermediates: ' ', final: 'A', limits: [cols], work: (_first, size) => screen(size), why: 'likewise, right' },
  {
    name: 'DECIC',
    intermediates: "'",
    final: '}',
    limits: [cols],
    work: (_first, size) => screen(size),
    why: 'inserts Ps columns in every row of the region, stopped at the row end',
  },
  { name: 'DECDC', intermediates: "'", final: '~', limits: [cols], work: (_first, size) => screen(size), why: 'deletes Ps columns likewise' },
]

/** ESC sequences that cost the whole screen per dispatch (no parameter to clamp; counted for slicing). */
export const ESC_RULES: readonly EscRule[] = [
  { name: 'DECALN', intermediates: '#', final: '8', work: screen, why: 'fills every cell with E' },
  { name: 'RIS', intermediates: '', final: 'c', work: (size) => 2 * screen(size), why: 'a full reset rebuilds both buffers' },
]

/**
 * Payload bytes an OSC, DCS (sixel included), SOS, PM or APC string may carry. A longer one is
 * dropped whole, terminator included: the emulator never sees it (xterm keeps up to 10 MB of it
 * as a string first; 64 KiB holds any title, hyperlink, colour or a clipboard write of 48 KiB).
 */
export const MAX_STRING_PAYLOAD = 64 * 1024

/**
 * Bytes an escape or CSI sequence may take (C0 controls inside it not counted). xterm keeps 32
 * parameters and saturates each at 2^31−1, so a longer list means nothing more; the guard must hold
 * a sequence until its final byte to clamp it, so a longer one is dropped whole.
 */
export const MAX_SEQUENCE_BYTES = 1024

/**
 * Work (in cells) one piece handed to the emulator may carry. xterm parses a piece without a break
 * and slices only between pieces (every ~12 ms it yields to the event loop), so a chunk full of
 * costly sequences is cut into pieces of about this much (a few ms of parsing each).
 */
export const MAX_PIECE_WORK = 1 << 20

/** Parameters xterm keeps per sequence (`Params` default); digits after the 32nd are ignored. */
export const MAX_PARAMETERS = 32
