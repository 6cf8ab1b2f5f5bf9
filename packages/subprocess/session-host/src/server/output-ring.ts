/**
 * The output of one terminal sent to its client and not yet acknowledged, by absolute offset. Its
 * size is what flow control bounds: the owner pauses the PTY once it reaches the window.
 */
export class OutputRing {
  #chunks: Buffer[] = []
  /** Absolute offset of the first byte held. */
  #start = 0
  #size = 0

  /** Absolute offset one past the last byte appended (the terminal's output so far). */
  get end(): number {
    return this.#start + this.#size
  }

  /** Bytes held (sent and not acknowledged). */
  get size(): number {
    return this.#size
  }

  /** Hold `chunk`, which starts at {@link end}. */
  append(chunk: Buffer): void {
    this.#chunks.push(chunk)
    this.#size += chunk.length
  }

  /** Drop every byte before absolute `offset`; false when `offset` is beyond {@link end} (nothing changes). */
  acknowledge(offset: number): boolean {
    if (offset > this.end) return false
    while (offset > this.#start) {
      const first = this.#chunks[0]!
      const drop = Math.min(first.length, offset - this.#start)
      if (drop === first.length) this.#chunks.shift()
      else this.#chunks[0] = first.subarray(drop)
      this.#start += drop
      this.#size -= drop
    }
    return true
  }
}
