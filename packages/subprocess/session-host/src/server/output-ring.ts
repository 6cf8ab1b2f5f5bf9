/**
 * The output of one terminal that the session host still holds, by absolute offset: every byte sent
 * and not yet acknowledged (what flow control bounds: the owner pauses the PTY once that reaches the
 * window), plus, for a durable terminal, the newest `capacity` bytes whatever was acknowledged (what
 * an adopter replays). Older bytes are dropped; {@link start} says where what is held begins.
 */
export class OutputRing {
  readonly #capacity: number
  #chunks: Buffer[] = []
  /** Absolute offset of the first byte held. */
  #start = 0
  #size = 0
  /** Absolute offset one past the last byte the client acknowledged. */
  #acknowledged = 0

  /** `capacity`: bytes kept after they were acknowledged (0 for a terminal nobody adopts). */
  constructor(capacity = 0) {
    this.#capacity = capacity
  }

  /** Absolute offset one past the last byte appended (the terminal's output so far). */
  get end(): number {
    return this.#start + this.#size
  }

  /** Absolute offset of the oldest byte held (where a replay starts). */
  get start(): number {
    return this.#start
  }

  /** Bytes held. */
  get size(): number {
    return this.#size
  }

  /** Bytes sent and not acknowledged: what flow control compares with the window. */
  get unacknowledged(): number {
    return this.end - this.#acknowledged
  }

  /** Hold `chunk`, which starts at {@link end}. */
  append(chunk: Buffer): void {
    this.#chunks.push(chunk)
    this.#size += chunk.length
    this.#trim()
  }

  /** Everything before absolute `offset` was delivered; false when `offset` is beyond {@link end} (nothing changes). */
  acknowledge(offset: number): boolean {
    if (offset > this.end) return false
    if (offset > this.#acknowledged) {
      this.#acknowledged = offset
      this.#trim()
    }
    return true
  }

  /** Nobody will acknowledge (the terminal is detached): keep only the newest `capacity` bytes. */
  acknowledgeAll(): void {
    this.acknowledge(this.end)
  }

  /** Count every byte held as unacknowledged again (an adopter is sent them from {@link start}); returns the chunks. */
  rewind(): readonly Buffer[] {
    this.#acknowledged = this.#start
    return [...this.#chunks]
  }

  /** Drop old bytes down to what must be kept: the unacknowledged ones, and at least `capacity` of the newest. */
  #trim(): void {
    const keep = Math.max(this.#capacity, this.unacknowledged)
    while (this.#size > keep) {
      const first = this.#chunks[0]!
      const drop = Math.min(first.length, this.#size - keep)
      if (drop === first.length) this.#chunks.shift()
      else this.#chunks[0] = first.subarray(drop)
      this.#start += drop
      this.#size -= drop
    }
  }
}
