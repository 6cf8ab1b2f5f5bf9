import { Buffer } from 'node:buffer'

// Byte budgets are counted in UTF-8, the size a model, a pipe or a file sees. Every cut here lands
// on a code-point boundary and returns a slice of the original string (a lone surrogate stays as it
// is and counts as the 3-byte U+FFFD it encodes to), so `kept.length < text.length` says "cut".

/** Size of `text` in UTF-8 bytes: the unit of every byte budget (a lone surrogate counts 3). */
export function utf8ByteLength(text: string): number {
  return text.length === 0 ? 0 : Buffer.byteLength(text, 'utf8')
}

/**
 * The longest tail of `text` that fits in `maxBytes` UTF-8 bytes, cut on a code-point boundary.
 * Costs O(kept), so bounding a huge text to a small budget never walks the discarded head.
 */
export function keepUtf8Tail(text: string, maxBytes: number): string {
  checkBudget(maxBytes)
  if (text.length * 3 <= maxBytes) return text
  let bytes = 0
  let index = text.length
  while (index > 0) {
    const unit = text.charCodeAt(index - 1)
    let width = 3
    let units = 1
    if (unit < 0x80) width = 1
    else if (unit < 0x800) width = 2
    else if (isLowSurrogate(unit) && index >= 2 && isHighSurrogate(text.charCodeAt(index - 2))) {
      width = 4
      units = 2
    }
    if (bytes + width > maxBytes) break
    bytes += width
    index -= units
  }
  return index === 0 ? text : text.slice(index)
}

/**
 * The longest head of `text` that fits in `maxBytes` UTF-8 bytes, cut on a code-point boundary.
 * Costs O(kept), like {@link keepUtf8Tail}.
 */
export function keepUtf8Head(text: string, maxBytes: number): string {
  checkBudget(maxBytes)
  if (text.length * 3 <= maxBytes) return text
  let bytes = 0
  let index = 0
  while (index < text.length) {
    const unit = text.charCodeAt(index)
    let width = 3
    let units = 1
    if (unit < 0x80) width = 1
    else if (unit < 0x800) width = 2
    else if (isHighSurrogate(unit) && index + 1 < text.length && isLowSurrogate(text.charCodeAt(index + 1))) {
      width = 4
      units = 2
    }
    if (bytes + width > maxBytes) break
    bytes += width
    index += units
  }
  return index === text.length ? text : text.slice(0, index)
}

/** Result of {@link dropUtf8Head}: the remaining text and how many bytes were actually removed. */
export interface Utf8Cut {
  /** What is left after the cut. */
  readonly text: string
  /** Bytes removed: at least the requested amount (unless the text was shorter), at most 3 more. */
  readonly removed: number
}

/**
 * `text` without its first `bytes` UTF-8 bytes; a code point straddling the cut is dropped whole,
 * so the rest never exceeds the budget. Costs O(removed), for trimming the head of a buffer.
 */
export function dropUtf8Head(text: string, bytes: number): Utf8Cut {
  let removed = 0
  let index = 0
  while (removed < bytes && index < text.length) {
    const unit = text.charCodeAt(index)
    if (unit < 0x80) removed += 1
    else if (unit < 0x800) removed += 2
    else if (isHighSurrogate(unit) && index + 1 < text.length && isLowSurrogate(text.charCodeAt(index + 1))) {
      removed += 4
      index += 1
    } else removed += 3
    index += 1
  }
  return { text: text.slice(index), removed }
}

/** Result of {@link fitTailAndTrailer}: the bounded text and whether it lost any byte. */
export interface FittedText {
  /** At most `maxBytes` UTF-8 bytes: the tail of the body followed by the whole trailer. */
  readonly text: string
  /** True when this text lost bytes (of the body, or of the trailer when even it did not fit). */
  readonly truncated: boolean
}

/**
 * Bound `body + trailer` to `maxBytes`, keeping the tail of `body` and the trailer whole, so that
 * status lines survive a byte cap. A trailer larger than the cap alone keeps its head.
 */
export function fitTailAndTrailer(body: string, trailer: string, maxBytes: number): FittedText {
  checkBudget(maxBytes)
  const trailerBytes = utf8ByteLength(trailer)
  if (trailerBytes >= maxBytes) {
    const text = keepUtf8Head(trailer, maxBytes)
    return { text, truncated: body.length > 0 || text.length < trailer.length }
  }
  const kept = keepUtf8Tail(body, maxBytes - trailerBytes)
  return { text: kept + trailer, truncated: kept.length < body.length }
}

function checkBudget(maxBytes: number): void {
  if (!(maxBytes >= 0)) throw new RangeError(`maxBytes must be a non-negative number, got ${maxBytes}`)
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff
}
