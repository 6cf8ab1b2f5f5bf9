import { DOUBLE_WIDTH, ZERO_WIDTH } from './width-table'

/** Code points below this are looked up in {@link LOOKUP}; the few ranges above it are searched. */
const LOOKUP_END = 0x20000

/**
 * The width of every code point of the first two planes (BMP, and the emoji of plane 1), filled from
 * the Unicode 11 ranges the emulator uses, so the line view counts columns as the screen does.
 */
const LOOKUP = new Uint8Array(LOOKUP_END).fill(1)
for (const [ranges, width] of [
  [ZERO_WIDTH, 0],
  [DOUBLE_WIDTH, 2],
] as const) {
  for (let index = 0; index < ranges.length; index += 2) {
    const start = ranges[index] as number
    if (start < LOOKUP_END) LOOKUP.fill(width, start, Math.min(LOOKUP_END, (ranges[index + 1] as number) + 1))
  }
}

/** Whether `point` lies in one of `ranges` (sorted start and end pairs). */
function inRanges(point: number, ranges: readonly number[]): boolean {
  let low = 0
  let high = ranges.length / 2 - 1
  while (low <= high) {
    const middle = (low + high) >>> 1
    if (point < (ranges[middle * 2] as number)) high = middle - 1
    else if (point > (ranges[middle * 2 + 1] as number)) low = middle + 1
    else return true
  }
  return false
}

/**
 * Columns a terminal gives code point `point` under Unicode 11 (the emulator's rules, see
 * `width-table.ts`): 2 for wide characters and emoji, 0 for combining marks and format characters
 * (they join the character before them), else 1. Controls are never asked about.
 */
export function cellWidth(point: number): number {
  // Nothing below the combining diacritics (U+0300) is wide or zero width: ASCII and Latin-1 stop here.
  if (point < 0x300) return 1
  if (point < LOOKUP_END) return LOOKUP[point] as number
  if (inRanges(point, DOUBLE_WIDTH)) return 2
  return inRanges(point, ZERO_WIDTH) ? 0 : 1
}

/** What the cell right of a wide character holds (no code point is this large). */
export const WIDE_TAIL = 0x110000

/** Columns of the complete, valid UTF-8 sequence of `length` bytes at `bytes[index]` (its lead 0xCC or above). */
export function sequenceWidth(bytes: Uint8Array, index: number, length: number): number {
  const lead = bytes[index] as number
  const point =
    length === 2
      ? ((lead & 0x1f) << 6) | ((bytes[index + 1] as number) & 0x3f)
      : length === 3
        ? ((lead & 0x0f) << 12) | (((bytes[index + 1] as number) & 0x3f) << 6) | ((bytes[index + 2] as number) & 0x3f)
        : ((lead & 0x07) << 18) |
          (((bytes[index + 1] as number) & 0x3f) << 12) |
          (((bytes[index + 2] as number) & 0x3f) << 6) |
          ((bytes[index + 3] as number) & 0x3f)
  return cellWidth(point)
}

/** Whether a cell holds the left half of a wide character (a plain code point, not a joined cell). */
export function isWideHead(cell: number): boolean {
  return cell >= 0x1100 && cell < WIDE_TAIL && cellWidth(cell) === 2
}
