import { decodeCells, dropCodePoints } from './code-points'
import { LinePieces } from './line-pieces'
import type { PartialLine } from './types'
import { utf8Length } from './utf8'

const MIN_CELLS = 64
const RETAINED_CELLS = 65536
const BLANK = 0x20
/**
 * Widest row a terminal is taken to have: how far the cursor may move past the end of the line, and
 * how many cells an insert, delete or erase shifts or blanks. It bounds what one sequence costs.
 */
export const ROW_CELLS = 512

/**
 * The line under the cursor, editable the way a terminal edits it: carriage return, backspace and
 * cursor moves only move the cursor; later text overwrites cells, insert/delete/erase-character and
 * erase-in-line edit them in place, so a progress bar collapses to its last frame and a readline edit
 * ends as the whole edited line. Blank cells an edit leaves after the cursor are dropped when the line
 * completes, as a terminal's copy drops them (`\b \b` erases a character that way).
 *
 * Two representations keep every edit O(edit size): while text is only appended (nearly all
 * output, including the CR of every CRLF, since moving the cursor changes nothing yet) the line is
 * a list of string pieces; the first write behind the end converts it once into a code-point cell
 * buffer that stays until the line completes. Columns are absolute code points; when the line
 * outgrows `maxLength`, its head is dropped and `base` records how much. While the line is
 * {@link TerminalLine.hidden} (a program draws on the alternate screen) nothing edits it.
 */
export class TerminalLine implements PartialLine {
  readonly #maxLength: number
  #number = 0
  #length = 0
  #cursor = 0
  #base = 0
  #cache: string | undefined
  // UTF-8 bytes of the retained content while only appends happened; -1 once an edit made it unknown.
  #bytes = 0
  // Append mode: the pieces hold columns [base, length).
  readonly #pieces = new LinePieces()
  // Edit mode: cells[column - shift] holds the code point of each column in [base, length).
  #editing = false
  #cells: Uint32Array = new Uint32Array(0)
  #shift = 0
  // Scratch for turning cells back into a string.
  #units: Uint16Array = new Uint16Array(0)
  #hidden = false
  // Lowest column where an edit left a blank (a space written over a cell, an erase, a pad).
  #blankedFrom = Number.POSITIVE_INFINITY

  /** @param maxLength - code points retained per line; a longer line keeps its tail. */
  constructor(maxLength: number) {
    if (!Number.isSafeInteger(maxLength) || maxLength < 1) throw new RangeError('maxLength must be a positive integer')
    this.#maxLength = maxLength
  }

  /** Absolute number of this line: the count of lines completed before it. */
  get number(): number {
    return this.#number
  }

  /** Length in code points, including a dropped head. */
  get length(): number {
    return this.#length
  }

  /** Cursor column in code points. */
  get cursor(): number {
    return this.#cursor
  }

  /** Leading code points dropped by the line cap. */
  get base(): number {
    return this.#base
  }

  /**
   * Whether the cursor is on the alternate screen: the normal screen's line stays as it was (a
   * terminal's history never receives what a full-screen program draws there) and ignores edits.
   */
  get hidden(): boolean {
    return this.#hidden
  }

  set hidden(hidden: boolean) {
    this.#hidden = hidden
  }

  /** Print `text` (`codePoints` code points, `bytes` UTF-8 bytes, no controls) at the cursor. */
  write(text: string, codePoints: number, bytes: number): void {
    if (codePoints === 0 || this.#hidden) return
    this.#cache = undefined
    if (!this.#editing) {
      if (this.#cursor >= this.#length) {
        // Past the end the cells in between are blank.
        const gap = this.#cursor - this.#length
        if (gap > 0) this.#append(' '.repeat(gap), gap, gap)
        this.#append(text, codePoints, bytes)
        return
      }
      this.#enterEdit()
    }
    if (this.#cursor > this.#length) this.#padToCursor()
    for (let index = 0; index < text.length; index++) {
      let point = text.charCodeAt(index)
      if (point >= 0xd800 && point <= 0xdbff && index + 1 < text.length) {
        const low = text.charCodeAt(index + 1)
        if (low >= 0xdc00 && low <= 0xdfff) {
          point = 0x10000 + ((point - 0xd800) << 10) + (low - 0xdc00)
          index++
        }
      }
      this.#put(point)
    }
  }

  /** Carriage return: the cursor goes to column 0 and later text overwrites the line from there. */
  carriageReturn(): void {
    if (this.#hidden) return
    this.#cursor = 0
    this.#dropBlanksPastCursor()
  }

  /** Backspace: the cursor moves one column left and nothing is erased, as on a terminal. */
  backspace(): void {
    if (this.#hidden || this.#cursor === 0) return
    this.#cursor -= 1
    this.#dropBlanksPastCursor()
  }

  /** Move the cursor to `column`: at least 0, at most {@link ROW_CELLS} past the end; moving writes nothing. */
  moveTo(column: number): void {
    if (this.#hidden) return
    this.#cursor = Math.max(0, Math.min(this.#length + ROW_CELLS, column))
    this.#dropBlanksPastCursor()
  }

  /** Erase from the cursor to the end of the line (EL 0). */
  eraseToEnd(): void {
    if (this.#hidden || this.#cursor >= this.#length) return
    this.#cache = undefined
    if (!this.#editing) {
      this.#bytes = -1
      this.#pieces.truncate(this.#length - this.#base, this.#cursor - this.#base)
    }
    this.#length = this.#cursor
    this.#clampBase()
  }

  /** Erase from the start of the row to the cursor, inclusive (EL 1): those cells become blanks. */
  eraseToStart(): void {
    if (this.#hidden) return
    const to = Math.min(this.#length, this.#cursor + 1)
    this.#blank(Math.max(this.#base, to - ROW_CELLS), to)
    this.#dropBlanksPastCursor()
  }

  /** Erase the whole line (EL 2); the cursor stays, so text written next follows blanks. */
  eraseLine(): void {
    if (this.#hidden) return
    const cursor = Math.min(this.#cursor, ROW_CELLS)
    this.#reset()
    this.#cursor = cursor
  }

  /** Erase `count` cells from the cursor on (ECH): they become blanks, nothing moves. */
  eraseCharacters(count: number): void {
    if (this.#hidden || this.#cursor >= this.#length) return
    const from = Math.max(this.#cursor, this.#base)
    const to = from + Math.min(count, ROW_CELLS)
    if (to >= this.#length) this.eraseToEnd()
    else this.#blank(from, to)
  }

  /** Delete `count` cells at the cursor (DCH): the rest of the row moves left, blanks enter at its end. */
  deleteCharacters(count: number): void {
    if (this.#hidden || this.#cursor >= this.#length) return
    this.#edit()
    const from = Math.max(this.#cursor, this.#base)
    const rowEnd = Math.min(this.#length, from + ROW_CELLS)
    const deleted = Math.min(count, rowEnd - from)
    const shift = this.#shift
    this.#cells.copyWithin(from - shift, from + deleted - shift, rowEnd - shift)
    // The row's last cells: gone when the row ends the line (blanks there are invisible), else blanks.
    if (rowEnd === this.#length) this.#length -= deleted
    else this.#blank(rowEnd - deleted, rowEnd)
  }

  /** Insert `count` blanks at the cursor (ICH): the rest of the row moves right; what passes its end is lost. */
  insertBlanks(count: number): void {
    if (this.#hidden || this.#cursor >= this.#length) return
    this.#edit()
    const from = Math.max(this.#cursor, this.#base)
    const margin = from + ROW_CELLS
    const rowEnd = Math.min(this.#length, margin)
    const inserted = Math.min(count, ROW_CELLS)
    const grown = Math.min(rowEnd + inserted, margin)
    this.#reserve(grown)
    const shift = this.#shift
    this.#cells.copyWithin(from + inserted - shift, from - shift, grown - inserted - shift)
    this.#blank(from, from + inserted)
    if (rowEnd === this.#length) {
      this.#length = grown
      if (this.#length - this.#base > this.#maxLength) this.#base = this.#length - this.#maxLength
    }
  }

  /**
   * Before the line completes: trailing blanks that edits left (`\b \b` erase echo, erased or
   * deleted cells) are dropped, as a terminal's copy drops them. Spaces the line was printed with
   * before any edit are kept, as is any line that was only ever appended to.
   */
  dropTrailingBlanks(): void {
    if (this.#editing && this.#blankedFrom < this.#length) this.#trimBlanks(this.#blankedFrom)
  }

  /** Drop the line's content without completing it (a redraw the history already holds); its number stays. */
  discard(): void {
    this.#reset()
  }

  /** Finish the line (newline): returns its retained text and starts the next, empty line. */
  complete(): string {
    const text = this.text()
    this.#reset()
    this.#number += 1
    return text
  }

  /** UTF-8 bytes of the retained content; free while the line was only appended to. */
  utf8Length(): number {
    if (this.#editing) return utf8Length(this.text())
    if (this.#bytes < 0) this.#bytes = utf8Length(this.text())
    return this.#bytes
  }

  /** Retained content of the line; cached until the next edit. */
  text(): string {
    if (this.#cache !== undefined) return this.#cache
    let text: string
    if (!this.#editing) {
      text = this.#pieces.join(this.#length - this.#base)
    } else {
      text = this.#decodeCells(this.#base, this.#length)
    }
    this.#cache = text
    return text
  }

  /** The last `count` code points of the retained content. */
  tail(count: number): string {
    const from = Math.max(this.#base, this.#length - count)
    if (from >= this.#length) return ''
    if (this.#editing) return this.#decodeCells(from, this.#length)
    return this.#pieces.tail(this.#length - from)
  }

  #append(text: string, codePoints: number, bytes: number): void {
    if (this.#bytes >= 0) this.#bytes += bytes
    if (codePoints > this.#maxLength) {
      // Only the tail of an oversized run can survive, so skip its head without storing it.
      const skipped = codePoints - this.#maxLength
      text = dropCodePoints(text, skipped)
      this.#length += skipped
      this.#base = this.#length
      this.#bytes = -1
      this.#pieces.clear()
      codePoints = this.#maxLength
    }
    this.#pieces.push(text, codePoints)
    this.#length += codePoints
    this.#cursor = this.#length
    const excess = this.#length - this.#base - this.#maxLength
    if (excess > 0) {
      this.#bytes = -1
      this.#base += excess
      this.#pieces.dropHead(excess)
    }
  }

  /** After the line shrank into its dropped head nothing is retained; restart the cells there. */
  #clampBase(): void {
    if (this.#base <= this.#length) return
    this.#base = this.#length
    this.#shift = this.#length
  }

  #put(point: number): void {
    const column = this.#cursor
    this.#cursor += 1
    if (column < this.#base) return
    if (point === BLANK && column < this.#blankedFrom) this.#blankedFrom = column
    let slot = column - this.#shift
    if (slot >= this.#cells.length) {
      this.#compact()
      slot = column - this.#shift
      if (slot >= this.#cells.length) this.#grow(slot + 1)
    }
    this.#cells[slot] = point
    if (this.#cursor > this.#length) {
      this.#length = this.#cursor
      if (this.#length - this.#base > this.#maxLength) {
        this.#base = this.#length - this.#maxLength
        if (this.#base - this.#shift > this.#cells.length >>> 1) this.#compact()
      }
    }
  }

  #enterEdit(): void {
    this.#bytes = -1
    const size = this.#length - this.#base
    const wanted = Math.max(MIN_CELLS, Math.min(size * 2, this.#maxLength + MIN_CELLS))
    if (this.#cells.length < Math.max(size, MIN_CELLS)) this.#cells = new Uint32Array(wanted)
    this.#pieces.copyInto(this.#cells)
    this.#shift = this.#base
    this.#pieces.clear()
    this.#editing = true
  }

  #compact(): void {
    const offset = this.#base - this.#shift
    if (offset <= 0) return
    this.#cells.copyWithin(0, offset, this.#length - this.#shift)
    this.#shift = this.#base
  }

  #grow(minimum: number): void {
    const next = new Uint32Array(Math.max(minimum, Math.min(this.#cells.length * 2, this.#maxLength + MIN_CELLS)))
    next.set(this.#cells.subarray(0, this.#length - this.#shift))
    this.#cells = next
  }

  #decodeCells(from: number, to: number): string {
    if (this.#units.length < (to - from) * 2) this.#units = new Uint16Array((to - from) * 2)
    return decodeCells(this.#cells, from - this.#shift, to - this.#shift, this.#units)
  }

  /** Before an edit of the cells: they exist and the cached text is stale. */
  #edit(): void {
    this.#cache = undefined
    if (!this.#editing) this.#enterEdit()
  }

  /** Cells `[from, to)` (inside the retained line) become blanks. */
  #blank(from: number, to: number): void {
    if (to <= from) return
    this.#edit()
    if (from < this.#blankedFrom) this.#blankedFrom = from
    this.#cells.fill(BLANK, from - this.#shift, to - this.#shift)
  }

  /** The cursor is past the end: the cells up to it become blanks, as on a terminal's row. */
  #padToCursor(): void {
    const target = this.#cursor
    this.#cursor = this.#length
    while (this.#cursor < target) this.#put(BLANK)
  }

  /** Blanks an edit left past the cursor at the end of the line are no content: the line ends before them. */
  #dropBlanksPastCursor(): void {
    if (this.#editing && this.#blankedFrom < this.#length) this.#trimBlanks(Math.max(this.#blankedFrom, this.#cursor))
  }

  /** Drop the blanks ending the line at columns from `floor` on. */
  #trimBlanks(floor: number): void {
    const bottom = Math.max(floor, this.#base)
    let end = this.#length
    while (end > bottom && this.#cells[end - 1 - this.#shift] === BLANK) end -= 1
    if (end === this.#length) return
    this.#cache = undefined
    this.#length = end
  }

  /** Room in the cells for columns up to `end` (exclusive). */
  #reserve(end: number): void {
    if (end - this.#shift <= this.#cells.length) return
    this.#compact()
    if (end - this.#shift > this.#cells.length) this.#grow(end - this.#shift)
  }

  #reset(): void {
    this.#cache = undefined
    this.#bytes = 0
    this.#length = 0
    this.#cursor = 0
    this.#blankedFrom = Number.POSITIVE_INFINITY
    this.#base = 0
    this.#shift = 0
    this.#editing = false
    this.#pieces.clear()
    // Buffers are reused from line to line, but one huge edited line should not pin its memory.
    if (this.#cells.length > RETAINED_CELLS) this.#cells = new Uint32Array(0)
    if (this.#units.length > RETAINED_CELLS * 2) this.#units = new Uint16Array(0)
  }
}
