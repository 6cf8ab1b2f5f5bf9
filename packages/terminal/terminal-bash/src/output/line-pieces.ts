import { dropCells, lastCellUnits, takeCells } from './code-points'
import { cellWidth, WIDE_TAIL } from './width'

/** Single characters merge into the last piece while it is shorter than this (UTF-16 units). */
const MERGE_LIMIT = 256

/**
 * The text of a line that was only ever appended to, kept as string pieces with their widths in
 * columns (a wide character takes two): an append costs O(1) and the pieces are joined once, when the text is read. This is the
 * representation nearly all output lines live and die in, so it stays small and allocation-free.
 */
export class LinePieces {
  #pieces: string[] = []
  #lengths: number[] = []
  // Pieces before this index were dropped from the head.
  #head = 0

  /** Append `text`, `columns` wide (zero-width text joins the last character, so it needs one before it). */
  push(text: string, columns: number): void {
    const last = this.#pieces.length - 1
    if (columns === 0) {
      if (last >= this.#head) this.#pieces[last] += text
    } else if (columns === 1 && last >= this.#head && (this.#pieces[last] as string).length < MERGE_LIMIT) {
      // Single characters from the slow path merge into the last piece instead of each taking a slot.
      this.#pieces[last] += text
      this.#lengths[last] = (this.#lengths[last] as number) + 1
    } else {
      this.#pieces.push(text)
      this.#lengths.push(columns)
    }
  }

  /**
   * Drop the first `count` columns (half a wide character left becomes a blank), with the zero-width
   * code points joined to them: a chunk may have ended between a character and its joiner, so a
   * piece may open with code points that belong to the last cell of the piece before it.
   */
  dropHead(count: number): void {
    while (count > 0 && this.#head < this.#pieces.length) {
      const size = this.#lengths[this.#head] as number
      if (size <= count) {
        count -= size
        this.#head += 1
        const next = this.#pieces[this.#head]
        if (next !== undefined && next.charCodeAt(0) >= 0x300) this.#pieces[this.#head] = dropCells(next, 0)
      } else {
        this.#pieces[this.#head] = dropCells(this.#pieces[this.#head] as string, count)
        this.#lengths[this.#head] = size - count
        count = 0
      }
    }
    if (this.#head > 64 && this.#head * 2 > this.#pieces.length) {
      this.#pieces = this.#pieces.slice(this.#head)
      this.#lengths = this.#lengths.slice(this.#head)
      this.#head = 0
    }
  }

  /** Cut the text from `size` columns back to `keep`, walking from the end so the cost is what is removed. */
  truncate(size: number, keep: number): void {
    while (this.#pieces.length > this.#head && size > keep) {
      const last = this.#pieces.length - 1
      const pieceSize = this.#lengths[last] as number
      if (size - pieceSize >= keep) {
        // Zero-width code points a piece starts with belong to the cell before it: kept when that cell is.
        const joined = size - pieceSize === keep ? takeCells(this.#pieces[last] as string, 0) : ''
        if (joined !== '') {
          this.#pieces[last] = joined
          this.#lengths[last] = 0
          size = keep
          break
        }
        this.#pieces.pop()
        this.#lengths.pop()
        size -= pieceSize
      } else {
        const kept = pieceSize - (size - keep)
        this.#pieces[last] = takeCells(this.#pieces[last] as string, kept)
        this.#lengths[last] = kept
        size = keep
      }
    }
  }

  /** The whole text (`size` columns); several pieces are joined and then kept as one. */
  join(size: number): string {
    const live = this.#pieces.length - this.#head
    if (live === 0) return ''
    if (live === 1) return this.#pieces[this.#head] as string
    const text = this.#pieces.slice(this.#head).join('')
    this.#pieces = [text]
    this.#lengths = [size]
    this.#head = 0
    return text
  }

  /** The last `count` columns (fewer when the text is narrower). */
  tail(count: number): string {
    let out = ''
    for (let index = this.#pieces.length - 1; index >= this.#head && count > 0; index--) {
      const piece = this.#pieces[index] as string
      const size = this.#lengths[index] as number
      if (size <= count) {
        out = piece + out
        count -= size
      } else {
        out = dropCells(piece, size - count) + out
        count = 0
      }
    }
    return out
  }

  /** UTF-16 units of the last cell's text (its character and what is joined to it); 0 without text. */
  lastCellUnits(): number {
    const last = this.#pieces.length - 1
    return last >= this.#head ? lastCellUnits(this.#pieces[last] as string) : 0
  }

  /**
   * Write the text into `cells` from index 0 on, one character per column ({@link WIDE_TAIL} right of
   * a wide one); a zero-width code point goes to `join` with the slot of the character it follows.
   * True when a wide character was among them.
   */
  copyInto(cells: Uint32Array, join: (slot: number, point: number) => void): boolean {
    let slot = 0
    let head = -1
    let wide = false
    for (let index = this.#head; index < this.#pieces.length; index++) {
      const piece = this.#pieces[index] as string
      for (let unit = 0; unit < piece.length; unit++) {
        const point = piece.codePointAt(unit) as number
        if (point > 0xffff) unit++
        const width = point < 0x300 ? 1 : cellWidth(point)
        if (width === 0) {
          if (head >= 0) join(head, point)
          continue
        }
        head = slot
        cells[slot++] = point
        if (width === 2) {
          cells[slot++] = WIDE_TAIL
          wide = true
        }
      }
    }
    return wide
  }

  /** Forget all text. */
  clear(): void {
    // Most lines are one piece; pop() is much cheaper than truncating through `length`.
    if (this.#pieces.length === 1) {
      this.#pieces.pop()
      this.#lengths.pop()
    } else if (this.#pieces.length > 1) {
      this.#pieces.length = 0
      this.#lengths.length = 0
    }
    this.#head = 0
  }
}
