/** {@link Utf8Decoder.next} result: the sequence needs more bytes. */
export const PENDING = -1
/** {@link Utf8Decoder.next} result: the byte cannot continue the sequence (emit U+FFFD, reprocess it). */
export const BROKEN = -2

/**
 * Byte-wise UTF-8 decoding state for the slow path (sequences split across chunks or broken).
 * Ranges follow the WHATWG decoder, so overlongs, surrogates and values above U+10FFFF are broken
 * at the first byte that proves it (one U+FFFD per maximal invalid subpart).
 */
export class Utf8Decoder {
  /** Whether a sequence has started and awaits continuation bytes (read-only for callers). */
  pending = false
  #need = 0
  #point = 0
  #lower = 0x80
  #upper = 0xbf

  /** Start a sequence at a lead byte 0xC2–0xF4. */
  start(lead: number): void {
    if (lead < 0xe0) this.#begin(1, lead & 0x1f, 0x80, 0xbf)
    else if (lead < 0xf0) this.#begin(2, lead & 0x0f, lead === 0xe0 ? 0xa0 : 0x80, lead === 0xed ? 0x9f : 0xbf)
    else this.#begin(3, lead & 0x07, lead === 0xf0 ? 0x90 : 0x80, lead === 0xf4 ? 0x8f : 0xbf)
  }

  /** Feed the next byte of a pending sequence: the code point, {@link PENDING} or {@link BROKEN}. */
  next(byte: number): number {
    if (byte < this.#lower || byte > this.#upper) {
      this.#need = 0
      this.pending = false
      return BROKEN
    }
    this.#point = (this.#point << 6) | (byte & 0x3f)
    this.#lower = 0x80
    this.#upper = 0xbf
    if (--this.#need > 0) return PENDING
    this.pending = false
    return this.#point
  }

  /** Abandon a pending sequence (end of stream); true when one was pending. */
  reset(): boolean {
    const pending = this.pending
    this.#need = 0
    this.pending = false
    return pending
  }

  #begin(need: number, bits: number, lower: number, upper: number): void {
    this.pending = true
    this.#need = need
    this.#point = bits
    this.#lower = lower
    this.#upper = upper
  }
}

/**
 * Classify the UTF-8 sequence whose lead byte (0xC2–0xF4) is at `index`: its length when complete
 * and valid; minus the length of its maximal invalid subpart when a byte in this chunk proves it
 * broken (that many bytes become one U+FFFD, the breaking byte is read again); 0 when the chunk
 * ends first. The ranges are the WHATWG decoder's.
 */
export function sequenceLength(bytes: Uint8Array, index: number, size: number): number {
  const lead = bytes[index] as number
  const need = lead < 0xe0 ? 1 : lead < 0xf0 ? 2 : 3
  for (let offset = 1; offset <= need; offset++) {
    if (index + offset >= size) return 0
    const byte = bytes[index + offset] as number
    const lower = offset > 1 ? 0x80 : lead === 0xe0 ? 0xa0 : lead === 0xf0 ? 0x90 : 0x80
    const upper = offset > 1 ? 0xbf : lead === 0xed ? 0x9f : lead === 0xf4 ? 0x8f : 0xbf
    if (byte < lower || byte > upper) return -offset
  }
  return need + 1
}
