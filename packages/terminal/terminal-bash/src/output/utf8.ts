import { Buffer } from 'node:buffer'

/** UTF-8 size of a well-formed string; every budget in the output layer is counted in these bytes. */
export function utf8Length(text: string): number {
  // A UTF-16 unit encodes to 1..3 bytes, so short ASCII-only strings are cheap to skip.
  return text.length === 0 ? 0 : Buffer.byteLength(text, 'utf8')
}

/**
 * The longest suffix of `text` that fits in `maxBytes` UTF-8 bytes, cut on a code-point boundary.
 * Costs O(kept), so bounding a huge line to a small budget does not walk the discarded head.
 */
export function keepUtf8Tail(text: string, maxBytes: number): string {
  if (text.length * 3 <= maxBytes) return text
  let bytes = 0
  let index = text.length
  while (index > 0) {
    const unit = text.charCodeAt(index - 1)
    let width: number
    let units = 1
    if (unit < 0x80) width = 1
    else if (unit < 0x800) width = 2
    else if (unit >= 0xdc00 && unit <= 0xdfff && index >= 2 && isHigh(text.charCodeAt(index - 2))) {
      width = 4
      units = 2
    } else width = 3
    if (bytes + width > maxBytes) break
    bytes += width
    index -= units
  }
  return index === 0 ? text : text.slice(index)
}

/**
 * The longest prefix of `text` that fits in `maxBytes` UTF-8 bytes, cut on a code-point boundary.
 * A forward page that must stop inside one oversized line keeps its head; costs O(kept).
 */
export function keepUtf8Head(text: string, maxBytes: number): string {
  if (text.length * 3 <= maxBytes) return text
  let bytes = 0
  let index = 0
  while (index < text.length) {
    const unit = text.charCodeAt(index)
    let width: number
    let units = 1
    if (unit < 0x80) width = 1
    else if (unit < 0x800) width = 2
    else if (isHigh(unit) && index + 1 < text.length && isLow(text.charCodeAt(index + 1))) {
      width = 4
      units = 2
    } else width = 3
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
    else if (isHigh(unit) && index + 1 < text.length && isLow(text.charCodeAt(index + 1))) {
      removed += 4
      index += 1
    } else removed += 3
    index += 1
  }
  return { text: text.slice(index), removed }
}

function isHigh(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff
}

function isLow(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff
}
