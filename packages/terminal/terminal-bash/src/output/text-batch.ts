import { Buffer } from 'node:buffer'
import type { TerminalLine } from './line'
import * as width from './width'

const CAPACITY = 4096
// A module-local binding: under a CommonJS transform (tsx, vitest) an imported one is a getter call.
const { cellWidth } = width

/**
 * Collects characters decoded one at a time and short ASCII runs as UTF-8 bytes, so each costs a
 * few byte stores instead of a string operation; a flush decodes them natively in one call. The
 * sanitizer flushes before any other edit of the line, so the line sees the same edits in order.
 */
export class TextBatch {
  readonly #line: TerminalLine
  readonly #bytes = Buffer.allocUnsafe(CAPACITY)
  #length = 0
  #points = 0

  /** @param line - where flushed text is written. */
  constructor(line: TerminalLine) {
    this.#line = line
  }

  /** Queue one code point (a valid scalar value, not a surrogate). */
  point(point: number): void {
    if (this.#length + 4 > CAPACITY) this.flush()
    const out = this.#bytes
    let at = this.#length
    if (point < 0x80) out[at++] = point
    else if (point < 0x800) {
      out[at++] = 0xc0 | (point >> 6)
      out[at++] = 0x80 | (point & 0x3f)
    } else if (point < 0x10000) {
      out[at++] = 0xe0 | (point >> 12)
      out[at++] = 0x80 | ((point >> 6) & 0x3f)
      out[at++] = 0x80 | (point & 0x3f)
    } else {
      out[at++] = 0xf0 | (point >> 18)
      out[at++] = 0x80 | ((point >> 12) & 0x3f)
      out[at++] = 0x80 | ((point >> 6) & 0x3f)
      out[at++] = 0x80 | (point & 0x3f)
    }
    this.#length = at
    this.#points += point < 0x300 ? 1 : cellWidth(point)
  }

  /** Queue `bytes[start..end)`: valid printable UTF-8 `points` columns wide, a few dozen bytes. */
  bytes(bytes: Uint8Array, start: number, end: number, points: number): void {
    if (this.#length + (end - start) > CAPACITY) this.flush()
    const out = this.#bytes
    let at = this.#length
    for (let index = start; index < end; index++) out[at++] = bytes[index] as number
    this.#points += points
    this.#length = at
  }

  /** Write everything queued to the line. */
  flush(): void {
    if (this.#length === 0) return
    this.#line.write(this.#bytes.toString('utf8', 0, this.#length), this.#points, this.#length)
    this.#length = 0
    this.#points = 0
  }
}
