import type { PartialLine, SanitizedChunk } from './types'
import { keepUtf8Head, keepUtf8Tail, utf8ByteLength } from 'dsh-basics'

/** Bounds of a {@link ScrollbackRing}. */
export interface ScrollbackOptions {
  /** Completed lines retained. */
  maxLines: number
  /** UTF-8 bytes retained, counting one newline per line; one longer line keeps its tail. */
  maxBytes: number
}

/** One page request: `count` lines ending `offset` lines before the newest. */
export interface ScrollbackReadRequest {
  /** Lines to skip back from the newest line (0 = the page ends at the newest line). Default 0. */
  offset?: number
  /** Lines in the page; the caller owns the default. */
  count: number
  /** UTF-8 cap on the page text, newlines included. Default: the ring's `maxBytes`. */
  maxBytes?: number
}

/** One page request read forward: at most `count` lines from absolute line `fromLine` on. */
export interface ScrollbackForwardRequest {
  /** Absolute number of the first line wanted (0 = the session's first line); evicted or future lines are allowed. */
  fromLine: number
  /** Lines in the page at most. */
  count: number
  /** UTF-8 cap on the page text, newlines included. Default: the ring's `maxBytes`. */
  maxBytes?: number
}

/**
 * One page of scrollback. Lines are numbered absolutely from 0 since the session started, so the
 * numbers survive eviction; the page covers `[lineBegin, lineEnd)` of `totalLines`.
 */
export interface ScrollbackPage {
  /** The page's lines joined by `\n` (no trailing newline). */
  text: string
  /** Lines produced so far, evicted ones included; an unterminated current line counts. */
  totalLines: number
  /** Absolute number of the first line in `text`. */
  lineBegin: number
  /** One past the absolute number of the last line in `text`. */
  lineEnd: number
  /**
   * True only when this page lost bytes: the requested range reached evicted lines, a line in
   * it had lost its head to a cap, or its one line had to be cut to fit `maxBytes` (a backward
   * page keeps that line's tail, a forward page its head). A page shortened to whole lines by
   * `maxBytes` is not truncated; `lineBegin` (backward) or `lineEnd` (forward) says where it stops.
   */
  truncated: boolean
}

const INITIAL_CAPACITY = 256

/**
 * Scrollback as a ring of completed lines bounded by count and UTF-8 bytes, plus the live current
 * line of the sanitizer. Appending costs O(new lines); nothing re-splits or re-joins the buffer.
 */
export class ScrollbackRing {
  readonly #maxLines: number
  readonly #maxBytes: number
  #texts: (string | undefined)[] = new Array(INITIAL_CAPACITY)
  #sizes = new Float64Array(INITIAL_CAPACITY)
  #clipped = new Uint8Array(INITIAL_CAPACITY)
  #start = 0
  #count = 0
  #first = 0
  #bytes = 0
  #partial: PartialLine | undefined

  /** Creates an empty ring with the given bounds (positive safe integers). */
  constructor(options: ScrollbackOptions) {
    for (const key of ['maxLines', 'maxBytes'] as const) {
      if (!Number.isSafeInteger(options[key]) || options[key] < 1) throw new RangeError(`${key} must be a positive integer`)
    }
    this.#maxLines = options.maxLines
    this.#maxBytes = options.maxBytes
  }

  /** Lines produced so far, evicted ones included, plus the current line when it is not empty. */
  get totalLines(): number {
    return this.#first + this.#count + (this.#partialLive() ? 1 : 0)
  }

  /** Completed lines evicted so far; nonzero once the ring has dropped anything. */
  get droppedLines(): number {
    return this.#first
  }

  /** Completed lines currently retained. */
  get retainedLines(): number {
    return this.#count
  }

  /** UTF-8 bytes currently retained (one newline per completed line included). */
  get retainedBytes(): number {
    return this.#bytes
  }

  /** Take the completed lines of a sanitized chunk and follow its live current line. */
  append(chunk: SanitizedChunk): void {
    const { lines, sizes, clipped } = chunk
    this.#partial = chunk.line
    const count = lines.length
    // Under a flood most lines of a chunk cannot survive: the ring ends up holding the longest
    // suffix that fits, so find where that suffix starts within the chunk, walking from the end.
    let from = count
    let bytes = 0
    while (from > 0 && count - from < this.#maxLines) {
      let cost = (sizes[from - 1] as number) + 1
      if (cost > this.#maxBytes) cost = utf8ByteLength(keepUtf8Tail(lines[from - 1] as string, this.#maxBytes - 1)) + 1
      if (bytes + cost > this.#maxBytes) break
      bytes += cost
      from -= 1
    }
    if (from > 0) {
      this.#first += this.#count + from
      this.#texts.fill(undefined)
      this.#start = 0
      this.#count = 0
      this.#bytes = 0
    }
    let next = 0
    while (next < clipped.length && (clipped[next] as number) < from) next += 1
    for (let index = from; index < count; index++) {
      const isClipped = next < clipped.length && clipped[next] === index
      if (isClipped) next += 1
      this.#store(lines[index] as string, sizes[index] as number, isClipped)
    }
  }

  /** Append one completed line; `clipped` marks a line whose head was already lost upstream. */
  push(text: string, clipped = false): void {
    this.#store(text, utf8ByteLength(text), clipped)
  }

  #store(text: string, size: number, clipped: boolean): void {
    if (size + 1 > this.#maxBytes) {
      text = keepUtf8Tail(text, this.#maxBytes - 1)
      size = utf8ByteLength(text)
      clipped = true
    }
    while (this.#count > 0 && (this.#count >= this.#maxLines || this.#bytes + size + 1 > this.#maxBytes)) this.#evict()
    if (this.#count === this.#texts.length) this.#grow()
    const slot = (this.#start + this.#count) % this.#texts.length
    this.#texts[slot] = text
    this.#sizes[slot] = size
    this.#clipped[slot] = clipped ? 1 : 0
    this.#count += 1
    this.#bytes += size + 1
  }

  /** Read one page back from the newest line; see {@link ScrollbackPage} for the truncation rule. */
  read(request: ScrollbackReadRequest): ScrollbackPage {
    const offset = request.offset ?? 0
    const maxBytes = request.maxBytes ?? this.#maxBytes
    checkCount('offset', offset)
    checkCount('count', request.count)
    checkCount('maxBytes', maxBytes)
    const totalLines = this.totalLines
    const end = Math.max(0, totalLines - offset)
    let begin = Math.max(0, end - request.count)
    // Evicted lines inside the window are lost to this page; the page then starts at what is left.
    let truncated = Math.min(end, this.#first) > begin
    begin = Math.min(end, Math.max(begin, this.#first))

    const picked: string[] = []
    let used = 0
    let lineBegin = end
    for (let number = end - 1; number >= begin; number--) {
      const line = this.#line(number)
      let text = line.text
      let clipped = line.clipped
      const cost = line.size + (picked.length > 0 ? 1 : 0)
      if (used + cost > maxBytes) {
        if (picked.length > 0) break
        text = keepUtf8Tail(text, maxBytes)
        clipped = true
      }
      picked.push(text)
      used += cost
      lineBegin = number
      if (clipped) truncated = true
    }
    return { text: picked.reverse().join('\n'), totalLines, lineBegin, lineEnd: end, truncated }
  }

  /**
   * Read one page forward from `fromLine`, whole lines from its start until `count` or `maxBytes`
   * ends it, so `lineEnd` is where the next page starts. Costs O(page), whatever came before.
   */
  readFrom(request: ScrollbackForwardRequest): ScrollbackPage {
    const { fromLine, count } = request
    const maxBytes = request.maxBytes ?? this.#maxBytes
    checkCount('fromLine', fromLine)
    checkCount('count', count)
    checkCount('maxBytes', maxBytes)
    const totalLines = this.totalLines
    const end = Math.min(totalLines, fromLine + count)
    // Evicted lines inside the window are lost to this page; the page then starts at what is left.
    let truncated = Math.min(end, this.#first) > fromLine
    const begin = Math.min(end, Math.max(fromLine, this.#first))

    const picked: string[] = []
    let used = 0
    let lineEnd = begin
    for (let number = begin; number < end; number++) {
      const line = this.#line(number)
      const cost = line.size + (picked.length > 0 ? 1 : 0)
      if (used + cost > maxBytes) {
        if (picked.length > 0) break
        // A line longer than the whole cap is the only one on its page, cut to its head.
        picked.push(keepUtf8Head(line.text, maxBytes))
        lineEnd = number + 1
        truncated = true
        break
      }
      picked.push(line.text)
      used += cost
      lineEnd = number + 1
      if (line.clipped) truncated = true
    }
    return { text: picked.join('\n'), totalLines, lineBegin: begin, lineEnd, truncated }
  }

  /** Line `number`, which must be retained: a completed line of the ring, or the live current line after them. */
  #line(number: number): { text: string; size: number; clipped: boolean } {
    const partial = this.#partial
    if (number === this.#first + this.#count && partial) return { text: partial.text(), size: partial.utf8Length(), clipped: partial.base > 0 }
    const slot = (this.#start + number - this.#first) % this.#texts.length
    return { text: this.#texts[slot] as string, size: this.#sizes[slot] as number, clipped: this.#clipped[slot] === 1 }
  }

  #partialLive(): boolean {
    return this.#partial !== undefined && this.#partial.length > 0
  }

  #evict(): void {
    const slot = this.#start
    this.#bytes -= (this.#sizes[slot] as number) + 1
    this.#texts[slot] = undefined
    this.#start = (slot + 1) % this.#texts.length
    this.#count -= 1
    this.#first += 1
  }

  #grow(): void {
    const capacity = this.#texts.length
    const next = Math.min(capacity * 2, Math.max(this.#maxLines, capacity + 1))
    const texts: (string | undefined)[] = new Array(next)
    const sizes = new Float64Array(next)
    const clipped = new Uint8Array(next)
    for (let index = 0; index < this.#count; index++) {
      const slot = (this.#start + index) % capacity
      texts[index] = this.#texts[slot]
      sizes[index] = this.#sizes[slot] as number
      clipped[index] = this.#clipped[slot] as number
    }
    this.#texts = texts
    this.#sizes = sizes
    this.#clipped = clipped
    this.#start = 0
  }
}

function checkCount(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative integer`)
}
