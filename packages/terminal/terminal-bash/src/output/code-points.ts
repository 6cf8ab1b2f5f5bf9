const DECODE_BATCH = 8192

/** The first `count` code points of `text` (a surrogate pair is one). */
export function takeCodePoints(text: string, count: number): string {
  return text.slice(0, codePointOffset(text, count))
}

/** `text` without its first `count` code points (a surrogate pair is one). */
export function dropCodePoints(text: string, count: number): string {
  return text.slice(codePointOffset(text, count))
}

/** The UTF-16 index where code point `count` of `text` starts. */
function codePointOffset(text: string, count: number): number {
  let index = 0
  while (count > 0 && index < text.length) {
    index += isHighSurrogate(text.charCodeAt(index)) && isLowSurrogate(text.charCodeAt(index + 1)) ? 2 : 1
    count -= 1
  }
  return index
}

/**
 * The string of the code points `cells[from..to)`, built through `scratch` (UTF-16 units, at least
 * twice `to - from` long) and decoded in native batches rather than one character at a time.
 */
export function decodeCells(cells: Uint32Array, from: number, to: number, scratch: Uint16Array): string {
  let size = 0
  for (let index = from; index < to; index++) {
    const point = cells[index] as number
    if (point > 0xffff) {
      scratch[size++] = 0xd800 + ((point - 0x10000) >> 10)
      scratch[size++] = 0xdc00 + ((point - 0x10000) & 0x3ff)
    } else scratch[size++] = point
  }
  let text = ''
  for (let start = 0; start < size; start += DECODE_BATCH) {
    const batch = scratch.subarray(start, Math.min(size, start + DECODE_BATCH))
    text += String.fromCharCode.apply(null, batch as unknown as number[])
  }
  return text
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff
}
