/**
 * UTF-8 as xterm's decoder (`Utf8ToUtf32`) reads it, byte by byte: which bytes start a character,
 * which characters it keeps, and the checks the guard's fast path makes on a whole chunk.
 */

const ESC = 0x1b

/** Bytes in the UTF-8 character `byte` starts, as xterm counts them (0xC0–0xDF two, 0xE0–0xEF three, 0xF0–0xF7 four); 0 for a byte that starts none. */
export function leadLength(byte: number): number {
  return byte >= 0xc0 && byte <= 0xdf ? 2 : byte >= 0xe0 && byte <= 0xef ? 3 : byte >= 0xf0 && byte <= 0xf7 ? 4 : 0
}

/** No ESC and no C1 control (`C2 80`–`C2 9F`, or a `C2` that may start one): nothing in it can start a sequence. */
export function isPlain(bytes: Uint8Array): boolean {
  if (bytes.indexOf(ESC) !== -1) return false
  let at = bytes.indexOf(0xc2)
  while (at !== -1) {
    const next = bytes[at + 1]
    if (next === undefined || (next >= 0x80 && next <= 0x9f)) return false
    at = bytes.indexOf(0xc2, at + 1)
  }
  return true
}

/** Length of an unfinished UTF-8 character at the end of `bytes` (a lead byte and fewer continuations than it needs), else 0. */
export function unfinishedTail(bytes: Uint8Array): number {
  const size = bytes.length
  for (let back = 1; back <= 3 && back <= size; back++) {
    const byte = bytes[size - back] as number
    if ((byte & 0xc0) === 0x80) continue
    return leadLength(byte) > back ? back : 0
  }
  return 0
}

/** The checks xterm's decoder applies to a complete character: overlong forms, surrogates, the BOM and beyond U+10FFFF decode to nothing. */
export function validPoint(point: number, length: number): boolean {
  if (length === 2) return point >= 0x80
  if (length === 3) return point >= 0x800 && (point < 0xd800 || point > 0xdfff) && point !== 0xfeff
  return point >= 0x10000 && point <= 0x10ffff
}
