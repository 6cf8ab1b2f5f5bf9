import { describe, expect, it } from 'vitest'
import { cellWidth } from '../src/output/width'
import { emulator } from './support/emulator'

/** Rows of the probe screen: one code point is printed at the start of each. */
const ROWS = 1000

/** Whether the line view is ever asked the width of `point`: controls are not printed, lone surrogates are not text. */
const printable = (point: number) => point >= 0x20 && !(point >= 0x7f && point < 0xa0) && !(point >= 0xd800 && point <= 0xdfff)

describe('the line view counts columns as the emulator does', () => {
  it('gives every code point the width the session emulator (Unicode 11) prints it with', async () => {
    // Each code point is printed alone at the start of a cleared row (the sequences before it leave
    // a zero-width one nothing to join, so it stays in its own cell), then its cell's width is read back.
    const terminal = emulator({ rows: ROWS, cols: 4 })
    const differ: string[] = []
    const dropped: number[] = []
    try {
      for (let start = 0; start < 0x110000; start += ROWS) {
        const points: number[] = []
        let text = ''
        for (let point = start; point < Math.min(start + ROWS, 0x110000); point++) {
          if (!printable(point)) continue
          text += `\x1b[${points.length + 1}H\x1b[2K${String.fromCodePoint(point)}`
          points.push(point)
        }
        await new Promise<void>((resolve) => terminal.write(text, resolve))
        const buffer = terminal.buffer.active
        for (const [row, point] of points.entries()) {
          const cell = buffer.getLine(row)?.getCell(0)
          if (cell?.getChars() === '') dropped.push(point)
          const printed = cell?.getWidth()
          if (cell?.getChars() !== '' && printed !== cellWidth(point) && differ.length < 20)
            differ.push(`U+${point.toString(16)}: emulator ${printed}, line view ${cellWidth(point)}`)
        }
      }
    } finally {
      terminal.dispose()
    }
    expect(differ).toEqual([])
    // The emulator drops a byte order mark; the line view keeps it, in no column, as tmux does.
    expect(dropped).toEqual([0xfeff])
    expect(cellWidth(0xfeff)).toBe(0)
  }, 120_000)

  it('takes the widths of the issue: emoji two columns, combining marks and U+200B none', () => {
    const widths = (text: string) => Array.from(text, (character) => cellWidth(character.codePointAt(0) as number))
    expect(widths('😀👍🚀⚡✅漢')).toEqual([2, 2, 2, 2, 2, 2])
    expect(widths('\u0301\u200B\uFE0F\u{E0100}')).toEqual([0, 0, 0, 0])
    expect(widths('aé€\u00AD')).toEqual([1, 1, 1, 1])
  })
})
