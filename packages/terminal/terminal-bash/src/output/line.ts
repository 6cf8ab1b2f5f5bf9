import type { PartialLine } from './types'
import { utf8Length } from './utf8'

const MIN_CELLS = 64
const DECODE_BATCH = 8192
const RETAINED_CELLS = 65536

/**
 * The line under the cursor, editable the way a terminal edits it: carriage return, backspace,
 * cursor moves and erase-in-line rewrite it in place, so a progress bar collapses to its last frame.
 *
 * Two representations keep every edit O(edit size): while text is only appended (nearly all
 * output, including the CR of every CRLF, since moving the cursor changes nothing yet) the line is
 * a list of string pieces; the first write behind the end converts it once into a code-point cell
 * buffer that stays until the line completes. Columns are absolute code points; when the line
 * outgrows `maxLength`, its head is dropped and `base` records how much.
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
  // Append mode: pieces[#head..] hold columns [base, length); pieceLengths holds their code points.
  #pieces: string[] = []
  #pieceLengths: number[] = []
  #head = 0
  // Edit mode: cells[column - shift] holds the code point of each column in [base, length).
  #editing = false
  #cells: Uint32Array = new Uint32Array(0)
  #shift = 0
  // Scratch for turning cells back into a string.
  #units: Uint16Array = new Uint16Array(0)

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

  /** Print `text` (`codePoints` code points, `bytes` UTF-8 bytes, no controls) at the cursor. */
  write(text: string, codePoints: number, bytes: number): void {
    if (codePoints === 0) return
    this.#cache = undefined
    if (!this.#editing) {
      if (this.#cursor === this.#length) {
        this.#append(text, codePoints, bytes)
        return
      }
      this.#enterEdit()
    }
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
    this.#cursor = 0
  }

  /**
   * Backspace. At the end of the line it erases the last character (what `\b \b` echo and most
   * programs mean); inside a line being rewritten it only moves the cursor left, like a terminal.
   */
  backspace(): void {
    if (this.#cursor === 0) return
    if (this.#cursor < this.#length) {
      this.#cursor -= 1
      return
    }
    this.#cache = undefined
    if (!this.#editing) this.#popPiece()
    this.#length -= 1
    this.#cursor = this.#length
    this.#clampBase()
  }

  /** Move the cursor to `column`, clamped to the line; moves never extend the line. */
  moveTo(column: number): void {
    this.#cursor = Math.max(0, Math.min(this.#length, column))
  }

  /** Erase from the cursor to the end of the line (EL 0). */
  eraseToEnd(): void {
    if (this.#cursor >= this.#length) return
    this.#cache = undefined
    if (!this.#editing) this.#truncatePieces(this.#cursor)
    this.#length = this.#cursor
    this.#clampBase()
  }

  /** Erase the whole line (EL 2); the cursor returns to column 0 since blank cells carry no text. */
  eraseLine(): void {
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
      const live = this.#pieces.length - this.#head
      text = live === 0 ? '' : live === 1 ? (this.#pieces[this.#head] as string) : this.#pieces.slice(this.#head).join('')
      if (live > 1) {
        this.#pieces = [text]
        this.#pieceLengths = [this.#length - this.#base]
        this.#head = 0
      }
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
    let need = this.#length - from
    let out = ''
    for (let index = this.#pieces.length - 1; index >= this.#head && need > 0; index--) {
      const piece = this.#pieces[index] as string
      const size = this.#pieceLengths[index] as number
      if (size <= need) {
        out = piece + out
        need -= size
      } else {
        out = dropCodePoints(piece, size - need) + out
        need = 0
      }
    }
    return out
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
      this.#clearPieces()
      codePoints = this.#maxLength
    }
    const last = this.#pieces.length - 1
    if (codePoints === 1 && last >= this.#head && (this.#pieces[last] as string).length < 256) {
      // Single characters from the slow path merge into the last piece instead of each taking a slot.
      this.#pieces[last] += text
      this.#pieceLengths[last] = (this.#pieceLengths[last] as number) + 1
    } else {
      this.#pieces.push(text)
      this.#pieceLengths.push(codePoints)
    }
    this.#length += codePoints
    this.#cursor = this.#length
    const excess = this.#length - this.#base - this.#maxLength
    if (excess > 0) this.#dropPieces(excess)
  }

  /** Cut the pieces back to `column`, walking from the end so the cost is what is removed. */
  #truncatePieces(column: number): void {
    this.#bytes = -1
    let size = this.#length
    while (this.#pieces.length > this.#head && size > column) {
      const last = this.#pieces.length - 1
      const pieceSize = this.#pieceLengths[last] as number
      if (size - pieceSize >= column) {
        this.#pieces.pop()
        this.#pieceLengths.pop()
        size -= pieceSize
      } else {
        const keep = pieceSize - (size - column)
        this.#pieces[last] = takeCodePoints(this.#pieces[last] as string, keep)
        this.#pieceLengths[last] = keep
        size = column
      }
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
    let slot = 0
    for (let index = this.#head; index < this.#pieces.length; index++) {
      const piece = this.#pieces[index] as string
      for (let unit = 0; unit < piece.length; unit++) {
        const point = piece.codePointAt(unit) as number
        if (point > 0xffff) unit++
        this.#cells[slot++] = point
      }
    }
    this.#shift = this.#base
    this.#clearPieces()
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
    const units = this.#units
    let size = 0
    for (let column = from; column < to; column++) {
      const point = this.#cells[column - this.#shift] as number
      if (point > 0xffff) {
        units[size++] = 0xd800 + ((point - 0x10000) >> 10)
        units[size++] = 0xdc00 + ((point - 0x10000) & 0x3ff)
      } else units[size++] = point
    }
    let text = ''
    for (let start = 0; start < size; start += DECODE_BATCH) {
      const batch = units.subarray(start, Math.min(size, start + DECODE_BATCH))
      text += String.fromCharCode.apply(null, batch as unknown as number[])
    }
    return text
  }

  #dropPieces(count: number): void {
    this.#bytes = -1
    this.#base += count
    while (count > 0 && this.#head < this.#pieces.length) {
      const size = this.#pieceLengths[this.#head] as number
      if (size <= count) {
        count -= size
        this.#head += 1
      } else {
        this.#pieces[this.#head] = dropCodePoints(this.#pieces[this.#head] as string, count)
        this.#pieceLengths[this.#head] = size - count
        count = 0
      }
    }
    if (this.#head > 64 && this.#head * 2 > this.#pieces.length) {
      this.#pieces = this.#pieces.slice(this.#head)
      this.#pieceLengths = this.#pieceLengths.slice(this.#head)
      this.#head = 0
    }
  }

  #popPiece(): void {
    this.#bytes = -1
    const last = this.#pieces.length - 1
    if (last < this.#head) return
    const piece = this.#pieces[last] as string
    const end = piece.length
    const cut = end >= 2 && isLowSurrogate(piece.charCodeAt(end - 1)) && isHighSurrogate(piece.charCodeAt(end - 2)) ? 2 : 1
    if (end - cut === 0) {
      this.#pieces.pop()
      this.#pieceLengths.pop()
    } else {
      this.#pieces[last] = piece.slice(0, end - cut)
      this.#pieceLengths[last] = (this.#pieceLengths[last] as number) - 1
    }
  }

  #clearPieces(): void {
    // Most lines are one piece; pop() is much cheaper than truncating through `length`.
    if (this.#pieces.length === 1) {
      this.#pieces.pop()
      this.#pieceLengths.pop()
    } else if (this.#pieces.length > 1) {
      this.#pieces.length = 0
      this.#pieceLengths.length = 0
    }
    this.#head = 0
  }

  #reset(): void {
    this.#cache = undefined
    this.#bytes = 0
    this.#length = 0
    this.#cursor = 0
    this.#base = 0
    this.#shift = 0
    this.#editing = false
    this.#clearPieces()
    // Buffers are reused from line to line, but one huge edited line should not pin its memory.
    if (this.#cells.length > RETAINED_CELLS) this.#cells = new Uint32Array(0)
    if (this.#units.length > RETAINED_CELLS * 2) this.#units = new Uint16Array(0)
  }
}

/** The first `count` code points of `text`. */
function takeCodePoints(text: string, count: number): string {
  let index = 0
  while (count > 0 && index < text.length) {
    index += isHighSurrogate(text.charCodeAt(index)) && isLowSurrogate(text.charCodeAt(index + 1)) ? 2 : 1
    count -= 1
  }
  return text.slice(0, index)
}

/** `text` without its first `count` code points. */
export function dropCodePoints(text: string, count: number): string {
  let index = 0
  while (count > 0 && index < text.length) {
    index += isHighSurrogate(text.charCodeAt(index)) && isLowSurrogate(text.charCodeAt(index + 1)) ? 2 : 1
    count -= 1
  }
  return text.slice(index)
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff
}
