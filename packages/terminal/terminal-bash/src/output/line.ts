import { dropCells, keepJoinable } from './code-points'
import { LineCells } from './line-cells'
import { LinePieces } from './line-pieces'
import type { PartialLine } from './types'
import { utf8ByteLength } from 'dsh-basics'
import { cellWidth, WIDE_TAIL } from './width'

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
 * buffer that stays until the line completes. Columns are absolute terminal columns (a wide
 * character takes two, see {@link cellWidth}); when the line
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
  // Edit mode: the cells hold the code point of each column in [base, length).
  #editing = false
  readonly #store: LineCells
  #hidden = false
  // The cells hold a wide character: writes must check for halves they cut (else they need not).
  #wide = false
  // Lowest column where an edit left a blank (a space written over a cell, an erase, a pad).
  #blankedFrom = Number.POSITIVE_INFINITY

  /** @param maxLength - columns retained per line; a longer line keeps its tail. */
  constructor(maxLength: number) {
    if (!Number.isSafeInteger(maxLength) || maxLength < 1) throw new RangeError('maxLength must be a positive integer')
    this.#maxLength = maxLength
    this.#store = new LineCells(maxLength)
  }

  /** Absolute number of this line: the count of lines completed before it. */
  get number(): number {
    return this.#number
  }

  /** Length in columns, including a dropped head. */
  get length(): number {
    return this.#length
  }

  /** Cursor column. */
  get cursor(): number {
    return this.#cursor
  }

  /** Leading columns dropped by the line cap. */
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

  /**
   * Print `text` (`columns` wide, `bytes` UTF-8 bytes, no controls) at the cursor. A zero-width code
   * point (a combining mark, U+200B) joins the cell left of the cursor (a blank past the end of the
   * line); at column 0 it is dropped. Both as tmux does.
   */
  write(text: string, columns: number, bytes: number): void {
    if (this.#hidden || text.length === 0) return
    this.#cache = undefined
    if (!this.#editing) {
      if (this.#cursor >= this.#length) {
        // Past the end the cells in between are blank.
        const gap = this.#cursor - this.#length
        // More bytes than four a column (zero-width code points are among them), or a line that holds
        // nothing yet: keep only the zero-width code points that have a character to join.
        if (bytes > columns * 4 || (this.#length === this.#base && text.charCodeAt(0) >= 0x300)) {
          const kept = keepJoinable(text, gap > 0 ? 1 : this.#pieces.lastCellUnits())
          if (kept.length === 0) return
          if (kept !== text) bytes = utf8ByteLength(kept)
          text = kept
        }
        if (gap > 0) this.#append(' '.repeat(gap), gap, gap)
        this.#append(text, columns, bytes)
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
      const width = point < 0x300 ? 1 : cellWidth(point)
      if (width === 0) this.#store.joinBefore(this.#cursor, point, this.#base, this.#length)
      else this.#put(point, width)
    }
    // Writing over the left half of a wide character at the end leaves a blank past the cursor.
    this.#dropBlanksPastCursor()
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
    if (this.#editing) this.#repair(this.#length)
  }

  /** Erase from the start of the row to the cursor, inclusive (EL 1): those cells become blanks. */
  eraseToStart(): void {
    if (this.#hidden) return
    const to = Math.min(this.#length, this.#cursor + 1)
    const from = Math.max(this.#base, to - ROW_CELLS)
    this.#blank(from, to)
    this.#repairRange(from, to)
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
    else {
      this.#blank(from, to)
      this.#repairRange(from, to)
    }
  }

  /** Delete `count` cells at the cursor (DCH): the rest of the row moves left, blanks enter at its end. */
  deleteCharacters(count: number): void {
    if (this.#hidden || this.#cursor >= this.#length) return
    this.#edit()
    const from = Math.max(this.#cursor, this.#base)
    const rowEnd = Math.min(this.#length, from + ROW_CELLS)
    const deleted = Math.min(count, rowEnd - from)
    const shift = this.#store.shift
    this.#store.cells.copyWithin(from - shift, from + deleted - shift, rowEnd - shift)
    // The row's last cells: gone when the row ends the line (blanks there are invisible), else blanks.
    if (rowEnd === this.#length) this.#length -= deleted
    else this.#blank(rowEnd - deleted, rowEnd)
    this.#repairRange(from, rowEnd - deleted)
    this.#repair(rowEnd)
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
    this.#store.reserve(grown, this.#base, this.#length)
    const shift = this.#store.shift
    this.#store.cells.copyWithin(from + inserted - shift, from - shift, grown - inserted - shift)
    this.#blank(from, from + inserted)
    if (rowEnd === this.#length) {
      this.#length = grown
      if (this.#length - this.#base > this.#maxLength) this.#base = this.#length - this.#maxLength
    }
    this.#repairRange(from, from + inserted)
    this.#repair(grown)
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
    if (this.#editing) return utf8ByteLength(this.text())
    if (this.#bytes < 0) this.#bytes = utf8ByteLength(this.text())
    return this.#bytes
  }

  /** Retained content of the line; cached until the next edit. */
  text(): string {
    if (this.#cache !== undefined) return this.#cache
    let text: string
    if (!this.#editing) {
      text = this.#pieces.join(this.#length - this.#base)
    } else {
      text = this.#store.decode(this.#base, this.#length)
    }
    this.#cache = text
    return text
  }

  /** The last `count` columns of the retained content. */
  tail(count: number): string {
    const from = Math.max(this.#base, this.#length - count)
    if (from >= this.#length) return ''
    if (this.#editing) return this.#store.decode(from, this.#length)
    return this.#pieces.tail(this.#length - from)
  }

  #append(text: string, columns: number, bytes: number): void {
    if (this.#bytes >= 0) this.#bytes += bytes
    if (columns > this.#maxLength) {
      // Only the tail of an oversized run can survive, so skip its head without storing it.
      const skipped = columns - this.#maxLength
      text = dropCells(text, skipped)
      this.#length += skipped
      this.#base = this.#length
      this.#bytes = -1
      this.#pieces.clear()
      columns = this.#maxLength
    }
    this.#pieces.push(text, columns)
    this.#length += columns
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
    this.#store.shift = this.#length
  }

  #put(point: number, width = 1): void {
    const column = this.#cursor
    this.#cursor = column + width
    if (column < this.#base) return
    if (point === BLANK && column < this.#blankedFrom) this.#blankedFrom = column
    const store = this.#store
    if (column + width - store.shift > store.cells.length) store.reserve(column + width, this.#base, this.#length)
    if (this.#wide && column < this.#length) this.#cutWide(column, column + width)
    store.cells[column - store.shift] = point
    if (width === 2) this.#putTail(column + 1)
    if (this.#cursor > this.#length) this.#extend()
  }

  /** A write over `[column, end)` cuts the wide characters it overlaps in part: their other halves become blanks. */
  #cutWide(column: number, end: number): void {
    this.#blanked(this.#store.cutWide(column, end, this.#base, this.#length))
  }

  #putTail(column: number): void {
    this.#store.cells[column - this.#store.shift] = WIDE_TAIL
    this.#wide = true
  }

  /** The cursor passed the end: the line grows to it, keeping at most `maxLength` columns. */
  #extend(): void {
    this.#length = this.#cursor
    if (this.#length - this.#base > this.#maxLength) {
      this.#base = this.#length - this.#maxLength
      if (this.#base - this.#store.shift > this.#store.cells.length >>> 1) this.#store.compact(this.#base, this.#length)
    }
  }

  /** {@link TerminalLine.#repair} at both ends of an edited range. */
  #repairRange(from: number, to: number): void {
    if (!this.#editing || !this.#wide) return
    this.#repair(from)
    this.#repair(to)
  }

  /** After cells moved or were erased at `column`: a wide character cut there loses its other half too. */
  #repair(column: number): void {
    if (this.#wide) this.#blanked(this.#store.repair(column, this.#base, this.#length))
  }

  #enterEdit(): void {
    this.#bytes = -1
    const size = this.#length - this.#base
    this.#wide = this.#store.load(this.#pieces, this.#base, size)
    this.#pieces.clear()
    this.#editing = true
  }

  /** The lowest column an edit of the cells left blank (or -1: none). */
  #blanked(column: number): void {
    if (column >= 0 && column < this.#blankedFrom) this.#blankedFrom = column
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
    this.#store.cells.fill(BLANK, from - this.#store.shift, to - this.#store.shift)
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
    const { cells, shift } = this.#store
    while (end > bottom && cells[end - 1 - shift] === BLANK) end -= 1
    if (end === this.#length) return
    this.#cache = undefined
    this.#length = end
  }

  #reset(): void {
    this.#cache = undefined
    this.#bytes = 0
    this.#length = 0
    this.#cursor = 0
    this.#blankedFrom = Number.POSITIVE_INFINITY
    this.#base = 0
    this.#editing = false
    this.#wide = false
    this.#pieces.clear()
    this.#store.release()
  }
}
