import { decodeCells } from './code-points'
import type { LinePieces } from './line-pieces'
import { isWideHead, WIDE_TAIL } from './width'

const MIN_CELLS = 64
const RETAINED_CELLS = 65536

/**
 * The cells of a line being edited: `cells[column - shift]` holds the code point of each retained
 * column (`WIDE_TAIL` right of a wide character). The buffer is reused from line to line, grows by
 * doubling up to the line cap and compacts when the line's dropped head gets large.
 */
export class LineCells {
  /** The cells; read and written directly by the line, which owns the column bounds. */
  cells: Uint32Array = new Uint32Array(0)
  /** Column of `cells[0]`. */
  shift = 0
  readonly #maxLength: number
  // Scratch for turning cells back into a string.
  #units: Uint16Array = new Uint16Array(0)

  /** @param maxLength - columns retained per line, the most the buffer ever needs. */
  constructor(maxLength: number) {
    this.#maxLength = maxLength
  }

  /** Take over an appended line's text: `size` columns from column `base` on; true when it holds a wide character. */
  load(pieces: LinePieces, base: number, size: number): boolean {
    const wanted = Math.max(MIN_CELLS, Math.min(size * 2, this.#maxLength + MIN_CELLS))
    if (this.cells.length < Math.max(size, MIN_CELLS)) this.cells = new Uint32Array(wanted)
    const wide = pieces.copyInto(this.cells)
    this.shift = base
    return wide
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
    if (this.#units.length < (to - from) * 2) this.#units = new Uint16Array((to - from) * 2)
    return decodeCells(this.cells, from - this.shift, to - this.shift, this.#units)
  }

  /** The line completed: the next starts at column 0, and one huge line does not pin its memory. */
  release(): void {
    this.shift = 0
    if (this.cells.length > RETAINED_CELLS) this.cells = new Uint32Array(0)
    if (this.#units.length > RETAINED_CELLS * 2) this.#units = new Uint16Array(0)
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
    if (right === WIDE_TAIL && (column <= base || !isWideHead(cells[column - 1 - shift] as number))) blanked = this.#blank(column)
    if (column > base && column <= length && right !== WIDE_TAIL && isWideHead(cells[column - 1 - shift] as number)) blanked = this.#blank(column - 1)
    return blanked
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
