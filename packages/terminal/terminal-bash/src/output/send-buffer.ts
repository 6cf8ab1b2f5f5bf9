import type { PartialLine, SanitizedChunk } from './types'
import { LineQueue } from './line-queue'
import { keepUtf8Tail, utf8Length } from './utf8'

/** One consumed slice of a send's output. */
export interface SendOutputRead {
  /** Output since the previous read (or since the send's write), bounded to the buffer's bytes. */
  delta: string
  /** True only when output produced since the previous read is missing from `delta`. */
  truncated: boolean
}

/** The final slice of a send's output at settlement. */
export interface SendOutputResult {
  /** Output not yet consumed by {@link SendOutputBuffer.readOutput}, bounded to the buffer's bytes. */
  viewport: string
  /** True only when output produced since the previous read is missing from `viewport`. */
  truncated: boolean
}

/** What the reader has already seen of one line: the pre-send prefix, or a delta that included it. */
interface Seen {
  readonly number: number
  readonly text: string
  readonly shown: boolean
}

/**
 * Output of one send: a byte-bounded {@link LineQueue} that keeps the newest output, read through a
 * consuming cursor. Appending a chunk costs O(1) plus O(1) per line it pushes out.
 *
 * The send owns what it caused: text already on the cursor's line when the send began (the prompt)
 * is not repeated. The current line may still be rewritten by a carriage return; when a reader has
 * already seen part of it and it changes, the next delta restates the whole line on a new line, so
 * the concatenated deltas form a transcript of what was observed.
 */
export class SendOutputBuffer {
  readonly #line: PartialLine
  readonly #maxBytes: number
  readonly #queue: LineQueue
  #seen: Seen | undefined
  #clipped = false
  #lostTotal = 0
  #settled = false

  /**
   * @param line - the sanitizer's live line at the moment of the write.
   * @param maxBytes - UTF-8 bytes kept between reads; older output beyond it is dropped.
   */
  constructor(line: PartialLine, maxBytes: number) {
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 1) throw new RangeError('maxBytes must be a positive integer')
    this.#line = line
    this.#maxBytes = maxBytes
    this.#queue = new LineQueue(maxBytes)
    if (line.length > 0) this.#seen = { number: line.number, text: line.text(), shown: false }
  }

  /**
   * A buffer that owns the whole of `line`, including what is already on it: for output that
   * followed a `waitFor` match, which nobody was shown yet.
   */
  static fromLineStart(line: PartialLine, maxBytes: number): SendOutputBuffer {
    const buffer = new SendOutputBuffer(line, maxBytes)
    buffer.#seen = undefined
    return buffer
  }

  /** UTF-8 bytes of this send's output dropped so far (before any reader saw them). */
  get lostBytes(): number {
    return this.#lostTotal + this.#queue.lost
  }

  /** True after {@link SendOutputBuffer.settle}; a settled send takes no more output. */
  get settled(): boolean {
    return this.#settled
  }

  /** Take the lines a sanitized chunk completed. Ignored once settled. */
  append(chunk: SanitizedChunk): void {
    if (this.#settled || chunk.lines.length === 0) return
    if (chunk.clipped.length > 0) this.#clipped = true
    const original = chunk.lines[0] as string
    const first = this.#render(chunk.firstLine, original)
    this.#queue.push(chunk.lines, chunk.sizes, first === original ? undefined : first)
  }

  /** Consume the output since the previous read, including the current line as it stands now. */
  readOutput(): SendOutputRead {
    if (this.#settled) return { delta: '', truncated: false }
    let current = ''
    const line = this.#line
    if (line.length > 0) {
      const text = line.text()
      const prior = this.#seen
      current = this.#render(line.number, text)
      const shown = current.length > 0 || (prior !== undefined && prior.number === line.number && prior.shown)
      this.#seen = { number: line.number, text, shown }
      if (line.base > 0) this.#clipped = true
    }
    const lost = this.#queue.lost
    this.#lostTotal += lost
    let delta = this.#queue.take() + current
    let truncated = lost > 0 || this.#clipped
    if (current.length > 0 && delta.length * 3 > this.#maxBytes) {
      const size = utf8Length(delta)
      if (size > this.#maxBytes) {
        delta = keepUtf8Tail(delta, this.#maxBytes)
        this.#lostTotal += size - utf8Length(delta)
        truncated = true
      }
    }
    this.#clipped = false
    return { delta, truncated }
  }

  /**
   * Final read at settlement; afterwards the buffer ignores output and holds nothing. Without
   * `currentLine` the line the cursor is on is left out (it belongs to whoever reads next).
   */
  settle(options: { readonly currentLine?: boolean } = {}): SendOutputResult {
    const { delta, truncated } = options.currentLine === false ? this.#readCompleted() : this.readOutput()
    this.#settled = true
    this.#seen = undefined
    return { viewport: delta, truncated }
  }

  /** Completed lines only: what {@link SendOutputBuffer.readOutput} returns, without the current line. */
  #readCompleted(): SendOutputRead {
    const lost = this.#queue.lost
    this.#lostTotal += lost
    // Ends at the end of the last line: its newline belongs with the next one, as on the screen.
    const delta = this.#queue.take().replace(/\n$/, '')
    const truncated = lost > 0 || this.#clipped
    this.#clipped = false
    return { delta, truncated }
  }

  /** The part of line `number` (final or current text) that the reader has not seen yet. */
  #render(number: number, text: string): string {
    const seen = this.#seen
    if (seen === undefined || seen.number !== number) return text
    this.#seen = undefined
    if (text.startsWith(seen.text)) return text.slice(seen.text.length)
    return seen.shown ? '\n' + text : text
  }
}
