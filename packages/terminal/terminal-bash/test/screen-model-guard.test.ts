import { Buffer } from 'node:buffer'
import { describe, expect, it } from 'vitest'
import { CSI_RULES, MAX_PIECE_WORK } from '../src/screen/emulator-rules'
import { MAX_UNPARSED_BYTES, MAX_UNPARSED_WORK, ScreenModel } from '../src/screen/screen-model'

// The screen model hands the emulator only what went through the guard, and bounds the work queued
// (fed as while a full-screen program holds the terminal: every chunk is parsed at once).
function model(rows = 40, cols = 160): ScreenModel {
  return new ScreenModel({ size: { rows, cols }, reply: () => {} })
}

describe('the screen model behind the guard', () => {
  it('acts on a huge count as on the screen-sized one, and clamps to the size of the moment', async () => {
    const huge = model(6, 20)
    const sized = model(6, 20)
    const lines = 'one\r\ntwo\r\nthree\r\nfour\x1b[2;1H'
    huge.write(Buffer.from(`${lines}\x1b[9999999L`, 'latin1'), true)
    sized.write(Buffer.from(`${lines}\x1b[6L`, 'latin1'), true)
    expect(await huge.snapshot()).toEqual(await sized.snapshot())
    // After a resize the bound is the new screen's: REP fills 10 × 30 and ends where the full count would.
    const repeat = CSI_RULES.find((rule) => rule.name === 'REP')?.limits[0]?.(999_999_999, { rows: 10, cols: 30 })
    expect(repeat).toBe(10 * 30 + 30 + ((999_999_999 - 330) % 30))
    for (const [screen, count] of [
      [huge, 999_999_999],
      [sized, repeat],
    ] as const) {
      screen.resize({ rows: 10, cols: 30 })
      screen.write(Buffer.from(`x\x1b[${count}b`, 'latin1'), true)
    }
    expect(await huge.snapshot()).toEqual(await sized.snapshot())
    expect((await huge.snapshot()).lines.at(-2)).toBe('x'.repeat(30))
  })

  it('keeps the queued work bounded while screen-wide sequences flood in', () => {
    const screen = model()
    const chunk = Buffer.from('\x1b#8\x1b[40L'.repeat(600), 'latin1')
    let peakWork = 0
    let peakBytes = 0
    for (let round = 0; round < 20; round++) {
      screen.write(chunk, true)
      peakWork = Math.max(peakWork, screen.unparsedWork)
      peakBytes = Math.max(peakBytes, screen.unparsedBytes)
    }
    expect(peakWork).toBeGreaterThan(0)
    expect(peakWork).toBeLessThanOrEqual(MAX_UNPARSED_WORK + MAX_PIECE_WORK)
    expect(peakBytes).toBeLessThanOrEqual(MAX_UNPARSED_BYTES)
  })
})
