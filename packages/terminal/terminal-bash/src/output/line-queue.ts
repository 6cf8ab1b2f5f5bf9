import { dropUtf8Head, utf8ByteLength } from 'dsh-basics'

/** The lines of one chunk still queued; `head` overrides the text of line `start` after a cut. */
interface Block {
  readonly lines: readonly string[]
  readonly sizes: readonly number[]
  start: number
  head: string | undefined
  headCost: number
}

/**
 * A FIFO of completed lines bounded by UTF-8 bytes (each line counted with its newline) that keeps
 * the newest bytes. Lines are queued a chunk at a time by reference, so a push costs O(1) plus O(1)
 * per line trimmed, and lines that cannot survive their own chunk are never queued at all.
 */
export class LineQueue {
  readonly #maxBytes: number
  #blocks: (Block | undefined)[] = []
  #first = 0
  #bytes = 0
  #lost = 0
  /** Lines queued now. */
  #lines = 0
  #droppedLines = 0
  #cutHead = false

  /** @param maxBytes - UTF-8 bytes retained, newlines included (a positive integer). */
  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes
  }

  /** Bytes currently queued. */
  get bytes(): number {
    return this.#bytes
  }

  /** Bytes dropped since the last {@link LineQueue.take}. */
  get lost(): number {
    return this.#lost
  }

  /**
   * Lines dropped whole since the last {@link LineQueue.take}: the next take starts that many lines
   * after the first one pushed since, which is how a reader keeps line numbers exact.
   */
  get droppedLines(): number {
    return this.#droppedLines
  }

  /** The oldest line still queued lost bytes at its head since the last take (it is still that line). */
  get cutHead(): boolean {
    return this.#cutHead
  }

  /**
   * Queue the lines of one chunk. `sizes[i]` is the UTF-8 size of `lines[i]` (no newline); `first`,
   * when given, replaces the text of `lines[0]`. The arrays must not change afterwards.
   */
  push(lines: readonly string[], sizes: readonly number[], first?: string): void {
    const count = lines.length
    if (count === 0) return
    const firstCost = (first === undefined ? (sizes[0] as number) : utf8ByteLength(first)) + 1
    // Under a flood most lines cannot survive: find the oldest one that still can, from the end.
    let budget = this.#maxBytes
    let from = count
    while (from > 0 && budget > 0) {
      from -= 1
      budget -= from === 0 ? firstCost : (sizes[from] as number) + 1
    }
    if (from > 0 || budget <= 0) {
      this.#lost += this.#bytes
      this.#droppedLines += this.#lines + from
      this.#lines = 0
      this.#cutHead = false
      this.#blocks = []
      this.#first = 0
      this.#bytes = 0
      for (let index = 0; index < from; index++) this.#lost += index === 0 ? firstCost : (sizes[index] as number) + 1
    }
    const whole = from === 0
    this.#blocks.push({
      lines: whole ? lines : lines.slice(from),
      sizes: whole ? sizes : sizes.slice(from),
      start: 0,
      head: whole ? first : undefined,
      headCost: whole ? firstCost : (sizes[from] as number) + 1,
    })
    this.#bytes += this.#maxBytes - budget
    this.#lines += count - from
    this.#trim()
  }

  /** Everything queued, each line followed by a newline; empties the queue and resets `lost` and the line counts. */
  take(): string {
    const parts: string[] = []
    for (let index = this.#first; index < this.#blocks.length; index++) {
      const block = this.#blocks[index] as Block
      for (let line = block.start; line < block.lines.length; line++) {
        parts.push(line === block.start && block.head !== undefined ? block.head : (block.lines[line] as string))
      }
    }
    this.#blocks = []
    this.#first = 0
    this.#bytes = 0
    this.#lost = 0
    this.#lines = 0
    this.#droppedLines = 0
    this.#cutHead = false
    return parts.length === 0 ? '' : parts.join('\n') + '\n'
  }

  #trim(): void {
    while (this.#bytes > this.#maxBytes) {
      const block = this.#blocks[this.#first] as Block
      const cost = block.head !== undefined ? block.headCost : (block.sizes[block.start] as number) + 1
      const over = this.#bytes - this.#maxBytes
      if (cost <= over) {
        this.#bytes -= cost
        this.#lost += cost
        this.#lines -= 1
        this.#droppedLines += 1
        this.#cutHead = false
        block.start += 1
        block.head = undefined
        if (block.start === block.lines.length) {
          this.#blocks[this.#first] = undefined
          this.#first += 1
        }
      } else {
        // Cut the head of the oldest line; its newline (the last byte of `cost`) always stays.
        const cut = dropUtf8Head(block.head ?? (block.lines[block.start] as string), over)
        block.head = cut.text
        block.headCost = cost - cut.removed
        this.#bytes -= cut.removed
        this.#lost += cut.removed
        this.#cutHead = true
      }
    }
    if (this.#first > 32 && this.#first * 2 > this.#blocks.length) {
      this.#blocks = this.#blocks.slice(this.#first)
      this.#first = 0
    }
  }
}
