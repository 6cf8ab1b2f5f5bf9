import { Buffer } from 'node:buffer'

/** Size of `text` in UTF-8 bytes (a lone surrogate counts as the 3-byte U+FFFD it encodes to). */
export function utf8ByteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8')
}

/**
 * The longest tail of `text` that fits in `maxBytes` UTF-8 bytes, cut on a code-point boundary.
 * Costs O(maxBytes), not O(text): only the last `maxBytes` UTF-16 units can ever survive.
 */
export function truncateUtf8Tail(text: string, maxBytes: number): string {
  const limit = byteLimit(maxBytes)
  if (text.length * 3 <= limit) return text
  let start = Math.max(0, text.length - limit)
  if (isLowSurrogate(text.charCodeAt(start)) && isHighSurrogate(text.charCodeAt(start - 1))) start++
  const candidate = start === 0 ? text : text.slice(start)
  const bytes = Buffer.from(candidate, 'utf8')
  if (bytes.length <= limit) return candidate
  let cut = bytes.length - limit
  while (cut < bytes.length && isContinuation(bytes[cut]!)) cut++
  return bytes.subarray(cut).toString('utf8')
}

/**
 * The longest head of `text` that fits in `maxBytes` UTF-8 bytes, cut on a code-point boundary.
 * Costs O(maxBytes), like {@link truncateUtf8Tail}.
 */
export function truncateUtf8Head(text: string, maxBytes: number): string {
  const limit = byteLimit(maxBytes)
  if (text.length * 3 <= limit) return text
  let end = Math.min(text.length, limit)
  if (isHighSurrogate(text.charCodeAt(end - 1)) && isLowSurrogate(text.charCodeAt(end))) end--
  const candidate = end === text.length ? text : text.slice(0, end)
  const bytes = Buffer.from(candidate, 'utf8')
  if (bytes.length <= limit) return candidate
  let cut = limit
  while (cut > 0 && isContinuation(bytes[cut]!)) cut--
  return bytes.subarray(0, cut).toString('utf8')
}

/** Result of {@link fitTail}: the bounded text and whether any byte of the body was dropped. */
export interface FittedText {
  /** At most `maxBytes` UTF-8 bytes: the tail of the body followed by the whole trailer. */
  text: string
  /** True when this text lost bytes (of the body, or of the trailer when even it did not fit). */
  truncated: boolean
}

/**
 * Bound `body + trailer` to `maxBytes`, keeping the tail of `body` and the trailer whole, so that
 * status lines survive a byte cap. A trailer larger than the cap alone keeps its head.
 */
export function fitTail(body: string, trailer: string, maxBytes: number): FittedText {
  const limit = byteLimit(maxBytes)
  const trailerBytes = utf8ByteLength(trailer)
  if (trailerBytes >= limit) {
    const text = truncateUtf8Head(trailer, limit)
    return { text, truncated: body.length > 0 || text.length < trailer.length }
  }
  const kept = truncateUtf8Tail(body, limit - trailerBytes)
  return { text: kept + trailer, truncated: kept.length < body.length }
}

function byteLimit(maxBytes: number): number {
  if (!(maxBytes >= 0)) throw new RangeError(`maxBytes must be a non-negative number, got ${maxBytes}`)
  return Math.floor(maxBytes)
}

function isContinuation(byte: number): boolean {
  return (byte & 0xc0) === 0x80
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff
}
