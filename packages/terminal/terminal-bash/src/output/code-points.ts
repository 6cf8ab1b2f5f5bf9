import { cellWidth, WIDE_TAIL } from './width'

const DECODE_BATCH = 8192

/**
 * Cells above {@link WIDE_TAIL} hold a character with zero-width code points joined to it: the
 * text is `joined[cell - JOINED]` (see `LineCells`).
 */
export const JOINED = WIDE_TAIL + 1

/**
 * Most UTF-16 units one cell's text holds: its character and the zero-width code points joined to it
 * (accents, variation selectors, an emoji tag sequence). Further ones are dropped, so a flood of
 * combining marks costs no memory.
 */
export const MAX_CELL_UNITS = 32

/** Whether `point` takes no column: it joins the character before it. */
function isZeroWidth(point: number): boolean {
  return point >= 0x300 && cellWidth(point) === 0
}

/**
 * The first `count` columns of `text`. A wide character the cut would halve is replaced by a
 * blank, as a terminal blanks what is left of a wide character, so the result is exactly `count`
 * columns (or all of `text` when it is narrower). Zero-width code points stay with their character.
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

/** `text` without its first `count` columns (and what is joined to them); the half a cut leaves of a wide character becomes a blank. */
export function dropCells(text: string, count: number): string {
  let index = 0
  let columns = 0
  while (columns < count && index < text.length) {
    const point = text.codePointAt(index) as number
    columns += cellWidth(point)
    index += point > 0xffff ? 2 : 1
  }
  while (index < text.length && isZeroWidth(text.codePointAt(index) as number)) index += (text.codePointAt(index) as number) > 0xffff ? 2 : 1
  return columns > count ? ` ${text.slice(index)}` : text.slice(index)
}

/**
 * `text` (appended after a cell whose text is `before` UTF-16 units long, 0 when no cell precedes it)
 * without the zero-width code points that have no character to join (at the start of a line, as
 * tmux drops them) or that would grow a cell past {@link MAX_CELL_UNITS}. The same string when all stay.
 */
export function keepJoinable(text: string, before: number): string {
  let units = before
  let kept = ''
  let from = 0
  let index = 0
  while (index < text.length) {
    const point = text.codePointAt(index) as number
    const size = point > 0xffff ? 2 : 1
    if (!isZeroWidth(point)) units = size
    else if (units > 0 && units + size <= MAX_CELL_UNITS) units += size
    else {
      kept += text.slice(from, index)
      from = index + size
    }
    index += size
  }
  return from === 0 ? text : kept + text.slice(from)
}

/** UTF-16 units of the last cell of `text` (its character and what is joined to it). */
export function lastCellUnits(text: string): number {
  let index = text.length
  while (index > 0) {
    const low = text.charCodeAt(index - 1)
    const size = low >= 0xdc00 && low <= 0xdfff && index > 1 ? 2 : 1
    index -= size
    if (!isZeroWidth(text.codePointAt(index) as number)) break
  }
  return text.length - index
}

/**
 * The string of the cells `cells[from..to)` (the column right of a wide character holds
 * {@link WIDE_TAIL} and adds nothing; a {@link JOINED} cell adds its text from `joined`), built
 * through `scratch` (UTF-16 units: at least twice `to - from`, plus the joined texts) and decoded in
 * native batches rather than one character at a time.
 */
export function decodeCells(cells: Uint32Array, from: number, to: number, scratch: Uint16Array, joined: readonly string[]): string {
  let size = 0
  for (let index = from; index < to; index++) {
    const point = cells[index] as number
    if (point > 0xffff) {
      if (point === WIDE_TAIL) continue
      if (point > WIDE_TAIL) {
        const text = joined[point - JOINED] as string
        for (let unit = 0; unit < text.length; unit++) scratch[size++] = text.charCodeAt(unit)
        continue
      }
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
