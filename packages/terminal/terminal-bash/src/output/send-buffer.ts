import type { PartialLine, SanitizedChunk } from './types'
import { LineQueue } from './line-queue'
import { keepUtf8Tail, utf8ByteLength } from 'dsh-basics'

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
  /**
   * Absolute number (0-based, as every line number of the output layer) of the line that viewport
   * line 0 belongs to: viewport line i is (part of) line `firstLine + i`. Absent when `viewport` is
   * empty or that would not hold exactly.
   */
  firstLine?: number
  /**
   * The beginning that `viewport` lost to the bound, when no read took a delta before: see
   * {@link SendOutputHead}. Absent when nothing was lost or no whole line of it was kept.
   */
  head?: SendOutputHead
}

/**
 * The first whole lines of a send's output that its viewport lost, and what was lost between them
 * and the viewport: the output is `text`, a newline, `gapBytes` bytes of `gapLines` whole lines and
 * the cut part of the viewport's first line, then the viewport.
 */
export interface SendOutputHead {
  /** Whole lines, rendered as the viewport renders them, joined by `\n` (no trailing newline). */
  readonly text: string
  /** Absolute number (0-based) of its first line; absent if the buffer missed a chunk. */
  readonly firstLine?: number
  /** Lines neither in `text` nor in the viewport. */
  readonly gapLines: number
  /** UTF-8 bytes neither in `text` (nor the newline after it) nor in the viewport. */
  readonly gapBytes: number
}

/** What one read took from the buffer, with what the bound dropped in front of it. */
interface Consumed {
  readonly viewport: string
  readonly truncated: boolean
  readonly firstLine: number | undefined
  /** Whole lines dropped in front of the viewport since the previous read (a restating break is one). */
  readonly droppedLines: number
  /** UTF-8 bytes dropped in front of the viewport since the previous read. */
  readonly droppedBytes: number
}

/**
 * The first whole lines of a send's output, up to a byte bound (newlines between them counted). It
 * stops for good at the first line that does not fit, so a flood costs nothing once it is full.
 */
class HeadLines {
  readonly lines: string[] = []
  /** `ends[i]`: UTF-8 bytes of `lines[0 … i]` joined by newlines, so any prefix is measured for free. */
  readonly ends: number[] = []
  readonly #maxBytes: number
  #full = false

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes
  }

  /** Take the lines of one chunk while they fit; `first` and `firstSize` are line 0 as rendered. */
  take(lines: readonly string[], sizes: readonly number[], first: string, firstSize: number): void {
    if (this.#full) return
    const ends = this.ends
    for (let index = 0; index < lines.length; index++) {
      const size = index === 0 ? firstSize : (sizes[index] as number)
      const end = ends.length === 0 ? size : (ends[ends.length - 1] as number) + 1 + size
      if (end > this.#maxBytes) {
        this.#full = true
        return
      }
      this.lines.push(index === 0 ? first : (lines[index] as string))
      ends.push(end)
    }
  }

  /**
   * The head beside a viewport in front of which the bound dropped `droppedLines` whole lines and
   * `droppedBytes` bytes from the output's start: only lines the viewport lacks, so every line is in
   * one place once; none when no whole line was dropped or the head kept none.
   */
  beside(droppedLines: number, droppedBytes: number, firstLine: number | undefined): SendOutputHead | undefined {
    const kept = Math.min(this.lines.length, droppedLines)
    if (kept === 0) return undefined
    const text = (kept === this.lines.length ? this.lines : this.lines.slice(0, kept)).join('\n')
    const gap = { gapLines: droppedLines - kept, gapBytes: droppedBytes - (this.ends[kept - 1] as number) - 1 }
    return firstLine === undefined ? { text, ...gap } : { text, firstLine, ...gap }
  }
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
 *
 * It also follows which line its unread output starts on, so the result can say where each of its
 * lines is in the scrollback: lines dropped whole by the bound move that start forward, and a
 * restating break in front of the output (a line of its own that is no line of the scrollback)
 * makes the mapping unknown until the break itself was dropped.
 *
 * Until a read takes a delta it also keeps the head of the output, the first whole lines up to a
 * quarter of its bytes, so a result that lost its beginning to the bound can still show it.
 */
export class SendOutputBuffer {
  readonly #line: PartialLine
  readonly #maxBytes: number
  readonly #queue: LineQueue
  #seen: Seen | undefined
  #clipped = false
  #lostTotal = 0
  #settled = false
  /** Absolute number of the line the unread output starts on. */
  #start: number
  /** Absolute number of the line the next chunk's first completed line must be, for no line to be missing. */
  #next: number
  /** The unread output opens with a restating break (see {@link SendOutputBuffer.#render}). */
  #restated = false
  /** A chunk did not start where the previous one ended: lines are missing, the mapping is unknown. */
  #gap = false
  /** The output's first lines, until a read takes a delta (the result then starts after it). */
  #head: HeadLines | undefined
  /** No chunk was ever missed, so head line i is line `#start + i` (while no read moved `#start`). */
  #headNumbered = true

  /**
   * @param line - the sanitizer's live line at the moment of the write.
   * @param maxBytes - UTF-8 bytes kept between reads; older output beyond it is dropped.
   */
  constructor(line: PartialLine, maxBytes: number) {
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 1) throw new RangeError('maxBytes must be a positive integer')
    this.#line = line
    this.#maxBytes = maxBytes
    this.#queue = new LineQueue(maxBytes)
    this.#head = new HeadLines(Math.floor(maxBytes / 4))
    this.#start = line.number
    this.#next = line.number
    if (line.length > 0) this.#seen = { number: line.number, text: line.text(), shown: false }
  }

  /**
   * A buffer that owns whole lines from line `firstLine` on (default: the current line), including
   * what is already on them: for output that followed a `waitFor` match, which nobody was shown yet.
   */
  static fromLineStart(line: PartialLine, maxBytes: number, firstLine = line.number): SendOutputBuffer {
    const buffer = new SendOutputBuffer(line, maxBytes)
    buffer.#seen = undefined
    buffer.#start = firstLine
    buffer.#next = firstLine
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
    if (chunk.firstLine !== this.#next) {
      this.#gap = true
      this.#headNumbered = false
    }
    this.#next = chunk.firstLine + chunk.lines.length
    if (chunk.clipped.length > 0) this.#clipped = true
    const original = chunk.lines[0] as string
    const first = this.#render(chunk.firstLine, original)
    this.#head?.take(chunk.lines, chunk.sizes, first, first === original ? (chunk.sizes[0] as number) : utf8ByteLength(first))
    this.#queue.push(chunk.lines, chunk.sizes, first === original ? undefined : first)
  }

  /** Consume the output since the previous read, including the current line as it stands now. */
  readOutput(): SendOutputRead {
    if (this.#settled) return { delta: '', truncated: false }
    const { viewport, truncated } = this.#consume(true)
    // The reader now has the beginning, and the result starts where it stopped; a read that took
    // nothing changed nothing.
    if (viewport !== '' || truncated) this.#head = undefined
    return { delta: viewport, truncated }
  }

  /**
   * Final read at settlement; afterwards the buffer ignores output and holds nothing. Without
   * `currentLine` the line the cursor is on is left out (it belongs to whoever reads next).
   */
  settle(options: { readonly currentLine?: boolean } = {}): SendOutputResult {
    if (this.#settled) return { viewport: '', truncated: false }
    const headFirstLine = this.#headNumbered ? this.#start : undefined
    const { viewport, truncated, firstLine, droppedLines, droppedBytes } = this.#consume(options.currentLine !== false)
    this.#settled = true
    this.#seen = undefined
    const result: SendOutputResult = firstLine === undefined ? { viewport, truncated } : { viewport, truncated, firstLine }
    // Without a read in between, what the bound dropped counts from the output's start, as the head does.
    const head = this.#head?.beside(droppedLines, droppedBytes, headFirstLine)
    this.#head = undefined
    if (head) result.head = head
    return result
  }

  /**
   * Take the unread output: the completed lines, then (with `currentLine`) the current line as it
   * stands now; without it the output ends at the end of the last line, whose newline belongs with
   * the next one, as on the screen. Also says which line the output starts on, when that is exact,
   * and how many lines and bytes the bound dropped in front of it.
   */
  #consume(currentLine: boolean): Consumed {
    const line = this.#line
    let current = ''
    if (currentLine && line.length > 0) {
      const text = line.text()
      const prior = this.#seen
      current = this.#render(line.number, text)
      const shown = current.length > 0 || (prior !== undefined && prior.number === line.number && prior.shown)
      this.#seen = { number: line.number, text, shown }
      if (line.base > 0) this.#clipped = true
    }
    const queue = this.#queue
    const lost = queue.lost
    this.#lostTotal += lost
    // The restating break is output line 0 of its own unless the bound already cut it away: it goes
    // with the first queued line, whether that line was dropped whole or lost its head.
    let restated = this.#restated && queue.droppedLines === 0 && !queue.cutHead
    let droppedLines = queue.droppedLines
    let droppedBytes = lost
    let firstLine = this.#start + queue.droppedLines - (restated ? 1 : 0)
    let output = queue.take() + current
    let truncated = lost > 0 || this.#clipped
    if (!currentLine) output = output.replace(/\n$/, '')
    else if (current.length > 0 && output.length * 3 > this.#maxBytes) {
      const size = utf8ByteLength(output)
      if (size > this.#maxBytes) {
        const kept = keepUtf8Tail(output, this.#maxBytes)
        const breaks = countBreaks(output, output.length - kept.length)
        firstLine += breaks
        droppedLines += breaks
        if (breaks > 0) restated = false
        output = kept
        const cut = size - utf8ByteLength(output)
        this.#lostTotal += cut
        droppedBytes += cut
        truncated = true
      }
    }
    // Without the current line nothing below depends on it; with it, it must be the line after the last chunk's.
    const exact = !restated && !this.#gap && (!currentLine || line.number === this.#next)
    this.#clipped = false
    this.#restated = false
    this.#gap = false
    this.#start = line.number
    this.#next = line.number
    return { viewport: output, truncated, firstLine: exact && output !== '' ? firstLine : undefined, droppedLines, droppedBytes }
  }

  /**
   * The part of line `number` (final or current text) that the reader has not seen yet. A seen line
   * that was rewritten is restated whole after a break: the output then opens with an extra line.
   */
  #render(number: number, text: string): string {
    const seen = this.#seen
    if (seen === undefined || seen.number !== number) return text
    this.#seen = undefined
    if (text.startsWith(seen.text)) return text.slice(seen.text.length)
    if (!seen.shown) return text
    this.#restated = true
    return '\n' + text
  }
}

/** Newlines in `text` before index `end`. */
function countBreaks(text: string, end: number): number {
  let count = 0
  for (let at = text.indexOf('\n'); at !== -1 && at < end; at = text.indexOf('\n', at + 1)) count += 1
  return count
}
