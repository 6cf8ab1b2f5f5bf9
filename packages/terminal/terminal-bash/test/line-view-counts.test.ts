import { describe, expect, it } from 'vitest'
import { TerminalSanitizer } from '../src/output'
import { ROW_CELLS } from '../src/output/line'
import { raw } from './helpers'

// The line view (the sanitizer) reads the same repeat counts as the emulator. It must not expand
// them: a count costs at most one row of cells (ROW_CELLS), whatever its value.
const HUGE = '999999999'

/** The current line after `text`: its length in columns and its text. */
function lineAfter(text: string): { length: number; text: string } {
  const sanitizer = new TerminalSanitizer({})
  sanitizer.write(raw(text))
  return { length: sanitizer.line.length, text: sanitizer.line.text() }
}

describe('repeat counts in the line view', () => {
  it('never repeats a character for REP (a line renderer has nothing to repeat from)', () => {
    expect(lineAfter(`x\x1b[${HUGE}b`)).toEqual({ length: 1, text: 'x' })
  })

  it('moves or inserts at most one row of cells per sequence, however large the count', () => {
    expect(lineAfter(`abc\x1b[${HUGE}Cy`).length).toBe(3 + ROW_CELLS + 1)
    expect(lineAfter(`abc\x1b[${HUGE}Gy`).length).toBe(3 + ROW_CELLS + 1)
    expect(lineAfter(`abc\r\x1b[${HUGE}@`).length).toBe(ROW_CELLS)
    expect(lineAfter(`abc\x1b[${HUGE}Cy\r\x1b[${HUGE}P`).length).toBeLessThanOrEqual(3 + ROW_CELLS + 1)
    expect(lineAfter(`abc\r\x1b[${HUGE}Xz`)).toEqual({ length: 1, text: 'z' })
  })

  it('keeps a flood of such sequences linear: each adds at most one row', () => {
    const repeats = 2000
    const { length } = lineAfter(`\x1b[${HUGE}Cy`.repeat(repeats))
    expect(length).toBeLessThanOrEqual(repeats * (ROW_CELLS + 1))
    // Vertical counts only move a row index within the screen.
    expect(lineAfter(`a\x1b[${HUGE}L\x1b[${HUGE}S\x1b[${HUGE}A\x1b[${HUGE}Bb`).text).toBe('ab')
  })
})
