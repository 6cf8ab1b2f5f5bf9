import { keepUtf8Tail, utf8ByteLength } from 'dsh-basics'

/** Compact the chunk array once this many dropped slots sit at its front. */
const COMPACT_AFTER = 1024

/**
 * Unread job output bounded to `limitBytes`, keeping the tail. A write costs O(chunk), never
 * O(buffer); memory stays under about twice the limit whatever the flood.
 */
export class OutputBuffer {
  readonly #limit: number
  #chunks: string[] = []
  #sizes: number[] = []
  #head = 0
  #bytes = 0
  #dropped = false

  constructor(limitBytes: number) {
    this.#limit = limitBytes
  }

  /** Unread bytes currently held (may exceed the limit by less than one chunk until read). */
  get bytes(): number {
    return this.#bytes
  }

  /** Append text, dropping whole chunks from the front once they fall outside the tail window. */
  write(text: string): void {
    if (!text) return
    let size = utf8ByteLength(text)
    if (size > this.#limit) {
      text = keepUtf8Tail(text, this.#limit)
      size = utf8ByteLength(text)
      this.#dropped = true
    }
    this.#chunks.push(text)
    this.#sizes.push(size)
    this.#bytes += size
    while (this.#head < this.#chunks.length - 1 && this.#bytes - this.#sizes[this.#head]! >= this.#limit) {
      this.#bytes -= this.#sizes[this.#head]!
      this.#chunks[this.#head] = ''
      this.#head++
      this.#dropped = true
    }
    if (this.#head >= COMPACT_AFTER && this.#head * 2 >= this.#chunks.length) {
      this.#chunks = this.#chunks.slice(this.#head)
      this.#sizes = this.#sizes.slice(this.#head)
      this.#head = 0
    }
  }

  /** Take all unread output (its tail within the limit) and whether bytes were lost since the last take. */
  take(): { text: string; truncated: boolean } {
    const joined = this.#chunks.slice(this.#head).join('')
    const text = keepUtf8Tail(joined, this.#limit)
    const truncated = this.#dropped || text.length < joined.length
    this.#chunks = []
    this.#sizes = []
    this.#head = 0
    this.#bytes = 0
    this.#dropped = false
    return { text, truncated }
  }
}
