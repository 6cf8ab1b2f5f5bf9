/**
 * The output layer counts lines from 0 (the session's first line is line 0: the sanitizer, the
 * scrollback ring, the send buffer); results and reads number them from 1, as editors and
 * `terminal_read` do. These two functions are the only place where one becomes the other.
 */

/** A line as the output layer counts it, from 0. */
export type LineIndex = number

/** A line as results and reads number it, from 1. */
export type LineNumber = number

/** The 1-based number of the line at 0-based `index`. */
export function lineNumberOf(index: LineIndex): LineNumber {
  return index + 1
}

/** The 0-based index of the line numbered `number` (from 1). */
export function lineIndexOf(number: LineNumber): LineIndex {
  return number - 1
}
