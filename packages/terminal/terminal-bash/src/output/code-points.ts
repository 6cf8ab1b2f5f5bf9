import { cellWidth, WIDE_TAIL } from './width'

const DECODE_BATCH = 8192

/**
 * The first `count` columns of `text`. A wide character the cut would halve is replaced by a
 * blank, as a terminal blanks what is left of a wide character, so the result is exactly `count`
 * columns (or all of `text` when it is narrower).
 */
export function takeCells(text: string, count: number): string {
  let index = 0
  let columns = 0
  while (index < text.length) {
    const point = text.codePointAt(index) as number
    const width = cellWidth(point)
    if (columns + width > count) return text.slice(0, index) + ' '.repeat(count - columns)
    columns += width
    index += point > 0xffff ? 2 : 1
  }
  return text
}

/** `text` without its first `count` columns; the half a cut leaves of a wide character becomes a blank. */
export function dropCells(text: string, count: number): string {
  let index = 0
  let columns = 0
  while (columns < count && index < text.length) {
    const point = text.codePointAt(index) as number
    columns += cellWidth(point)
    index += point > 0xffff ? 2 : 1
  }
  return columns > count ? ` ${text.slice(index)}` : text.slice(index)
}

/**
 * The string of the cells `cells[from..to)` (the column right of a wide character holds
 * {@link WIDE_TAIL} and adds nothing), built through `scratch` (UTF-16 units, at least twice
 * `to - from` long) and decoded in native batches rather than one character at a time.
 */
export function decodeCells(cells: Uint32Array, from: number, to: number, scratch: Uint16Array): string {
  let size = 0
  for (let index = from; index < to; index++) {
    const point = cells[index] as number
    if (point > 0xffff) {
      if (point === WIDE_TAIL) continue
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
