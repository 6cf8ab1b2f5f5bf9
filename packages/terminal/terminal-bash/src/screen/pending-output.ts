import type { TerminalSize } from 'dsh-terminal'

/** One thing the emulator has not seen yet: a chunk of output, or the size the PTY changed to at that point. */
export type PendingEntry = Uint8Array | TerminalSize

/** What {@link PendingOutput.take} hands over. */
export interface TakenOutput {
  /** The entries, oldest first. */
  readonly entries: readonly PendingEntry[]
  /** The size the first entry was laid out for. */
  readonly size: TerminalSize
  /** Older entries were dropped to keep the bound: the first chunk may start anywhere in a line. */
  readonly dropped: boolean
}

/**
 * The output a sleeping emulator has not parsed yet, in arrival order, bounded: once it holds more
 * than `maxBytes`, whole chunks are dropped from the head (never the newest one) and the drop is
 * remembered, so the emulator knows it must start again. It can start again only at a point outside
 * any sequence (the caller says where each chunk has one): output before the first such point is
 * dropped too, and while none is held, arriving output up to the next such point is dropped at once.
 * Chunks are kept as they arrived, not copied.
 */
export class PendingOutput {
  readonly #maxBytes: number
  #entries: PendingEntry[] = []
  /** For each entry: where in the chunk an emulator can start again (outside any sequence), or -1. */
  #restartPoints: number[] = []
  /** Index of the oldest entry still held (dropping moves it instead of shifting the array). */
  #head = 0
  #bytes = 0
  #size: TerminalSize = { rows: 0, cols: 0 }
  /** Output was dropped since the latest {@link PendingOutput.take}. */
  #dropped = false
  /** Output was dropped and no chunk held since starts outside a sequence: the next one held must. */
  #resyncing = false

  /** An empty queue that keeps at most about `maxBytes` (one chunk more at worst). */
  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes
  }

  /** Bytes of output held. */
  get bytes(): number {
    return this.#bytes
  }

  /** Nothing is held and nothing was dropped: the emulator is up to date. */
  get empty(): boolean {
    return this.#head === this.#entries.length && !this.#dropped && !this.#resyncing
  }

  /** Forget everything; output from here on is laid out for `size`. */
  resetTo(size: TerminalSize): void {
    this.#entries = []
    this.#restartPoints = []
    this.#head = 0
    this.#bytes = 0
    this.#size = size
    this.#dropped = false
    this.#resyncing = false
  }

  /** Hold a resize: the output after it was laid out for `size`. */
  resize(size: TerminalSize): void {
    if (this.#head === this.#entries.length) this.#size = size
    else {
      this.#entries.push(size)
      this.#restartPoints.push(-1)
    }
  }

  /**
   * Hold one more chunk; `restartAt` is where in it an emulator could start again (the first offset
   * outside any sequence, 0 when the chunk starts there, -1 when it lies inside one). Past the bound
   * the oldest output goes, up to the first point an emulator can start again at.
   */
  push(chunk: Uint8Array, restartAt: number): void {
    let kept = chunk
    if (this.#resyncing) {
      if (restartAt < 0) return
      kept = chunk.subarray(restartAt)
      this.#resyncing = false
    }
    this.#entries.push(kept)
    this.#restartPoints.push(kept === chunk ? restartAt : 0)
    this.#bytes += kept.length
    if (this.#bytes <= this.#maxBytes) return
    while (this.#bytes > this.#maxBytes && this.#entries.length - this.#head > 1) this.#dropOldest()
    // Restart only outside any sequence: drop up to the first chunk that has such a point, and the part before it.
    while (this.#head < this.#entries.length && (this.#restartPoints[this.#head] as number) < 0) this.#dropOldest()
    const restart = this.#restartPoints[this.#head] as number
    if (restart > 0) {
      const head = this.#entries[this.#head] as Uint8Array
      this.#entries[this.#head] = head.subarray(restart)
      this.#restartPoints[this.#head] = 0
      this.#bytes -= restart
      this.#dropped = true
    }
  }

  /**
   * Everything held, handed over; the queue is then empty, for output laid out for `size` (still
   * waiting for a chunk to start again at, when output was dropped and none came yet).
   */
  take(size: TerminalSize): TakenOutput {
    const taken = { entries: this.#entries.slice(this.#head), size: this.#size, dropped: this.#dropped }
    const resyncing = this.#resyncing
    this.resetTo(size)
    this.#resyncing = resyncing
    return taken
  }

  #dropOldest(): void {
    const oldest = this.#entries[this.#head] as PendingEntry
    this.#head += 1
    this.#dropped = true
    if (oldest instanceof Uint8Array) this.#bytes -= oldest.length
    // A resize that is dropped still says what size the output after it was laid out for.
    else this.#size = oldest
    if (this.#head === this.#entries.length) this.#resyncing = true
    if (this.#head >= 1024 && this.#head * 2 >= this.#entries.length) {
      this.#entries = this.#entries.slice(this.#head)
      this.#restartPoints = this.#restartPoints.slice(this.#head)
      this.#head = 0
    }
  }
}
