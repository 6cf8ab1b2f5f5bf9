import { decodeCells, JOINED, MAX_CELL_UNITS } from './code-points'
import type { LinePieces } from './line-pieces'
import { cellWidth, isWideHead, WIDE_TAIL } from './width'

const MIN_CELLS = 64
const RETAINED_CELLS = 65536

/**
 * The cells of a line being edited: `cells[column - shift]` holds the code point of each retained
 * column (`WIDE_TAIL` right of a wide character). A character with zero-width code points joined
 * to it (`e` and U+0301, an emoji and U+FE0F) is a {@link JOINED} cell whose text sits in a side
 * table, so moves, erases and inserts carry it like any cell. The buffer is reused from line to line,
 * grows by doubling up to the line cap and compacts when the line's dropped head gets large.
 */
export class LineCells {
  /** The cells; read and written directly by the line, which owns the column bounds. */
  cells: Uint32Array = new Uint32Array(0)
  /** Column of `cells[0]`. */
  shift = 0
  readonly #maxLength: number
  // Scratch for turning cells back into a string.
  #units: Uint16Array = new Uint16Array(0)
  // The texts of joined cells (cell value JOINED + index); entries of overwritten cells stay until a compaction.
  #joined: string[] = []
  // UTF-16 units of all of #joined: what decoding may need beyond two units a cell.
  #joinedUnits = 0

  /** @param maxLength - columns retained per line, the most the buffer ever needs. */
  constructor(maxLength: number) {
    this.#maxLength = maxLength
  }

  /** Take over an appended line's text: `size` columns from column `base` on; true when it holds a wide character. */
  load(pieces: LinePieces, base: number, size: number): boolean {
    const wanted = Math.max(MIN_CELLS, Math.min(size * 2, this.#maxLength + MIN_CELLS))
    if (this.cells.length < Math.max(size, MIN_CELLS)) this.cells = new Uint32Array(wanted)
    this.shift = base
    return pieces.copyInto(this.cells, (slot, point) => this.#joinAt(slot, point))
  }

  /**
   * Join zero-width `point` to the character left of column `cursor` (the head of a wide one) of a
   * line retaining `[base, length)`. Dropped when there is none, or once the cell's text is full.
   */
  joinBefore(cursor: number, point: number, base: number, length: number): void {
    let column = cursor - 1
    if (column < base || column >= length) return
    if (this.cells[column - this.shift] === WIDE_TAIL && --column < base) return
    if (this.#joined.length >= 2 * (length - base) + MIN_CELLS) this.#compactJoined(base, length)
    this.#joinAt(column - this.shift, point)
  }

  /** Whether `cell` holds the left half of a wide character, joined or not. */
  isWideHead(cell: number): boolean {
    if (cell <= WIDE_TAIL) return isWideHead(cell)
    return cellWidth((this.#joined[cell - JOINED] as string).codePointAt(0) as number) === 2
  }

  /** Room for columns below `end` of a line retaining `[base, length)`. */
  reserve(end: number, base: number, length: number): void {
    if (end - this.shift <= this.cells.length) return
    this.compact(base, length)
    if (end - this.shift > this.cells.length) this.#grow(end - this.shift, length)
  }

  /** Move the retained columns `[base, length)` to the start of the buffer. */
  compact(base: number, length: number): void {
    const offset = base - this.shift
    if (offset <= 0) return
    this.cells.copyWithin(0, offset, length - this.shift)
    this.shift = base
  }

  /** The text of columns `[from, to)`. */
  decode(from: number, to: number): string {
    const units = (to - from) * 2 + this.#joinedUnits
    if (this.#units.length < units) this.#units = new Uint16Array(units)
    return decodeCells(this.cells, from - this.shift, to - this.shift, this.#units, this.#joined)
  }

  /** The line completed: the next starts at column 0, and one huge line does not pin its memory. */
  release(): void {
    this.shift = 0
    if (this.cells.length > RETAINED_CELLS) this.cells = new Uint32Array(0)
    if (this.#units.length > RETAINED_CELLS * 2) this.#units = new Uint16Array(0)
    if (this.#joined.length > 0) {
      this.#joined = []
      this.#joinedUnits = 0
    }
  }

  /**
   * A write over `[column, end)` of a line retaining `[base, length)` cuts the wide characters it
   * overlaps in part: their other halves become blanks. Returns the lowest column blanked, or -1.
   */
  cutWide(column: number, end: number, base: number, length: number): number {
    let blanked = -1
    if (end < length && this.cells[end - this.shift] === WIDE_TAIL) blanked = this.#blank(end)
    if (column > base && this.cells[column - this.shift] === WIDE_TAIL) blanked = this.#blank(column - 1)
    return blanked
  }

  /**
   * After cells moved or were erased at `column`: the half of a wide character left on either side
   * of it becomes a blank. Returns the lowest column blanked, or -1.
   */
  repair(column: number, base: number, length: number): number {
    const cells = this.cells
    const shift = this.shift
    const right = column < length ? (cells[column - shift] as number) : 0
    let blanked = -1
    if (right === WIDE_TAIL && (column <= base || !this.isWideHead(cells[column - 1 - shift] as number))) blanked = this.#blank(column)
    if (column > base && column <= length && right !== WIDE_TAIL && this.isWideHead(cells[column - 1 - shift] as number)) blanked = this.#blank(column - 1)
    return blanked
  }

  /** Append zero-width `point` to the text of the cell at buffer index `slot`. */
  #joinAt(slot: number, point: number): void {
    const cell = this.cells[slot] as number
    const mark = String.fromCodePoint(point)
    if (cell > WIDE_TAIL) {
      const index = cell - JOINED
      const text = this.#joined[index] as string
      if (text.length + mark.length > MAX_CELL_UNITS) return
      this.#joined[index] = text + mark
    } else {
      this.#joined.push(String.fromCodePoint(cell) + mark)
      this.cells[slot] = JOINED + this.#joined.length - 1
    }
    this.#joinedUnits += mark.length
  }

  /** Drop the joined texts no cell of `[base, length)` refers to any more (their cells were overwritten). */
  #compactJoined(base: number, length: number): void {
    const kept: string[] = []
    let units = 0
    for (let slot = base - this.shift; slot < length - this.shift; slot++) {
      const cell = this.cells[slot] as number
      if (cell <= WIDE_TAIL) continue
      const text = this.#joined[cell - JOINED] as string
      this.cells[slot] = JOINED + kept.length
      kept.push(text)
      units += text.length
    }
    this.#joined = kept
    this.#joinedUnits = units
  }

  #blank(column: number): number {
    this.cells[column - this.shift] = 0x20
    return column
  }

  #grow(minimum: number, length: number): void {
    const next = new Uint32Array(Math.max(minimum, Math.min(this.cells.length * 2, this.#maxLength + MIN_CELLS)))
    next.set(this.cells.subarray(0, length - this.shift))
    this.cells = next
  }
}
