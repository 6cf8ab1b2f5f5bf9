import { Buffer } from 'node:buffer'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { EmulatorGuard } from '../src/screen/emulator-guard'
import { CSI_RULES, MAX_PIECE_WORK, MAX_SEQUENCE_BYTES, MAX_STRING_PAYLOAD } from '../src/screen/emulator-rules'
import { emulator, guard, recordCounts, renderAfter, screenOf } from './support/emulator'

const SIZE = { rows: 40, cols: 160 }
const HUGE = 999_999_999
const bytes = (text: string) => Buffer.from(text, 'latin1')
const utf8 = (text: string) => Buffer.from(text, 'utf8')

/** The sequence of `rule` with `values` as its parameters (8-bit intermediates as the rule spells them). */
function sequence(rule: (typeof CSI_RULES)[number], values: readonly number[]): string {
  return `\x1b[${values.join(';')}${rule.intermediates}${rule.final}`
}

describe('the clamping rules', () => {
  const clamped = CSI_RULES.filter((rule) => rule.limits.length > 0)

  it.each(clamped.map((rule) => [rule.name, rule] as const))('%s: a count past the screen is rewritten to its bound, the rest kept', (_name, rule) => {
    for (let position = 0; position < rule.limits.length; position++) {
      const values = rule.limits.map(() => 2)
      values[position] = HUGE
      const expected = values.map((value, index) => rule.limits[index]?.(value, SIZE) ?? value)
      expect(expected[position]).toBeLessThan(HUGE)
      expect(guard([sequence(rule, values)], SIZE).bytes.toString('latin1')).toBe(sequence(rule, expected))
    }
  })

  it.each(clamped.map((rule) => [rule.name, rule] as const))('%s: a count at its bound passes byte for byte', (_name, rule) => {
    const values = rule.limits.map((limit) => limit?.(HUGE, SIZE) ?? 1)
    const atBound = rule.name === 'REP' ? SIZE.rows * SIZE.cols + SIZE.cols : undefined
    const text = `x${sequence(rule, atBound ? [atBound] : values)}\x1b[0012${rule.intermediates}${rule.final}`
    expect(guard([text], SIZE).bytes.toString('latin1')).toBe(text)
  })

  it('leaves prefixed variants and sequences no rule names as they are', () => {
    const text = '\x1b[?9999999L\x1b[>9999999b\x1b[9999999;9999999m\x1b[9999999 q\x1b[9999999!L'
    expect(guard([text]).bytes.toString('latin1')).toBe(text)
  })

  it('reads parameters as xterm does: leading zeros, sub-parameters, empty ones, the 8-bit CSI in UTF-8', () => {
    expect(guard(['\x1b[0000000000000000000000099999L']).bytes.toString('latin1')).toBe('\x1b[40L')
    expect(guard(['\x1b[99999:7;5H']).bytes.toString('latin1')).toBe('\x1b[40;5H')
    expect(guard(['\x1b[;99999H']).bytes.toString('latin1')).toBe('\x1b[;160H')
    expect(guard([utf8('\u009b99999L')]).bytes.toString('latin1')).toBe('\x1b[40L')
    // A raw 0x9B is invalid UTF-8 to xterm, not a CSI: it passes, and so does what follows as text.
    expect(guard(['\x9b99999L']).bytes.toString('latin1')).toBe('\x9b99999L')
  })

  it('passes C0 controls inside a sequence on ahead of it, in order (xterm executes them on the spot)', () => {
    expect(guard(['\x1b[99\r\n999L']).bytes.toString('latin1')).toBe('\r\n\x1b[40L')
    expect(guard(['\x1b[2\n;3H']).bytes.toString('latin1')).toBe('\n\x1b[2;3H')
  })

  it('drops an escape sequence longer than its bound whole, and only it', () => {
    const long = `\x1b[${'0'.repeat(MAX_SEQUENCE_BYTES)}9999999L`
    expect(guard([`a${long}b`]).bytes.toString('latin1')).toBe('ab')
    const fits = `\x1b[${'0'.repeat(MAX_SEQUENCE_BYTES - 8)}12L`
    expect(guard([fits]).bytes.toString('latin1')).toBe(fits)
  })
})

describe('control strings', () => {
  it.each([
    ['OSC ended by BEL', '\x1b]', '\x07'],
    ['OSC ended by ST', '\x1b]', '\x1b\\'],
    ['OSC ended by the C1 ST', '\x1b]', '\xc2\x9c'],
    ['DCS (sixel)', '\x1bP0;1q', '\x1b\\'],
    ['APC', '\x1b_', '\x1b\\'],
    ['PM', '\x1b^', '\x1b\\'],
    ['SOS', '\x1bX', '\x1b\\'],
  ])('%s: a payload of 64 KiB reaches the emulator, one byte more is dropped whole', (_name, opener, terminator) => {
    // The payload is every byte after ESC and the opener's letter (a DCS's parameters included).
    const exact = `${opener}${'A'.repeat(MAX_STRING_PAYLOAD - (opener.length - 2))}${terminator}`
    expect(guard([exact, 'after']).bytes.toString('latin1')).toBe(`${exact}after`)
    const over = `${opener}${'A'.repeat(MAX_STRING_PAYLOAD - (opener.length - 2) + 1)}${terminator}`
    // ST (ESC \) is an escape sequence of its own once the string is gone; it does nothing.
    const left = terminator === '\x1b\\' ? '\x1b\\' : ''
    expect(guard([over, 'after']).bytes.toString('latin1')).toBe(`${left}after`)
    // Split into chunks of 1000 bytes: the same.
    const chunks = over.match(/[\s\S]{1,1000}/g) ?? []
    expect(guard([...chunks, 'after']).bytes.toString('latin1')).toBe(`${left}after`)
  })

  it('holds nothing more than the bound while a huge string streams through', () => {
    const chunks = ['\x1b]52;c;', ...Array.from({ length: 200 }, () => 'A'.repeat(4096))]
    const result = guard(chunks)
    expect(result.bytes.length).toBe(0)
    expect(result.held).toBe(0)
  })

  it('ends strings where xterm does: BEL does not end a DCS or APC, a non-ASCII character ends an APC', () => {
    expect(guard(['\x1bP$q\x07m\x1b\\x']).bytes.toString('latin1')).toBe('\x1bP$q\x07m\x1b\\x')
    const apc = utf8('\x1b_abc\u00e9\x1b[99999L')
    expect(guard([apc]).bytes.toString('latin1')).toBe(`${utf8('\x1b_abc\u00e9').toString('latin1')}\x1b[40L`)
  })
})

describe('what xterm receives', () => {
  const attacks = [
    '\x1b[9999999L',
    '\x1b[9999999M',
    '\x1b[9999999S',
    '\x1b[9999999T',
    'x\x1b[999999999b',
    '\x1b[999999999I',
    '\x1b[999999999Z',
    // Invalid UTF-8 inside the parameters: xterm skips the bytes and goes on reading the sequence.
    '\x1b[99999\xe2\x80L',
    '\x1b[99999\xc0\xafL',
    '\x1b[99999\x80L',
    '\x1b[99999\xfeL',
    // The 8-bit CSI, as UTF-8.
    '\xc2\x9b9999999L',
  ]
  const corpus = bytes(`${attacks.join('plain text ')}\x1b]0;title\x07${utf8('\u00e9\u6f22\u{1d11e}').toString('latin1')}\x1b[31mred\x1b[m\r\n`)

  it('never gets a count past the screen, however the stream is split (every offset, two chunks)', async () => {
    for (let at = 0; at <= corpus.length; at++) {
      const terminal = emulator(SIZE)
      const counts = recordCounts(terminal, 'LMSTbIZ')
      await renderAfter(terminal, guard([corpus.subarray(0, at), corpus.subarray(at)], SIZE).pieces)
      terminal.dispose()
      expect(counts.length).toBe(attacks.length)
      expect(Math.max(...counts)).toBeLessThanOrEqual(SIZE.rows * SIZE.cols + 2 * SIZE.cols)
    }
  })

  it('gives the same bytes for any split into chunks, and never splits a UTF-8 character', () => {
    const whole = guard([corpus]).bytes
    const cuts = fc.uniqueArray(fc.integer({ min: 1, max: corpus.length - 1 }), { maxLength: 12 })
    fc.assert(
      fc.property(cuts, (points) => {
        const sorted = [...points].sort((a, b) => a - b)
        const chunks = [...sorted, corpus.length].map((end, index) => corpus.subarray(index === 0 ? 0 : (sorted[index - 1] as number), end))
        const result = guard(chunks)
        expect(result.bytes.equals(whole)).toBe(true)
        for (const piece of result.pieces) expect(endsInsideCharacter(piece)).toBe(false)
      }),
    )
  })

  it('passes a chunk with no ESC and no C1 control untouched, as the very same bytes', () => {
    const chunk = utf8('plain text, \u00e9, \u00b0, \u6f22\r\n')
    const seen: Uint8Array[] = []
    new EmulatorGuard(SIZE).write(chunk, (piece) => seen.push(piece))
    expect(seen).toEqual([chunk])
    expect(seen[0]).toBe(chunk)
  })

  it('cuts a chunk full of screen-wide sequences into pieces of bounded work', () => {
    const result = guard(['\x1b#8'.repeat(2000)], SIZE)
    expect(result.pieces.length).toBeGreaterThan(4)
    const screen = SIZE.rows * SIZE.cols
    for (const work of result.works) expect(work).toBeLessThan(MAX_PIECE_WORK + screen)
    expect(result.works.reduce((sum, work) => sum + work, 0)).toBe(2000 * screen)
  })
})

describe('the screen with and without the guard', () => {
  const small = { rows: 6, cols: 12 }
  const fill = bytes(`${Array.from({ length: 6 }, (_, row) => `${row}abcdefghij`.slice(0, 11)).join('\r\n')}\x1b[3;4H`)

  it.each(CSI_RULES.filter((rule) => rule.name !== 'REP').map((rule) => [rule.name, rule] as const))(
    '%s: any count renders as xterm renders it unguarded',
    async (_name, rule) => {
      for (const region of ['', '\x1b[2;5r\x1b[3;4H']) {
        for (const count of [1, 5, 6, 11, 12, 13, 40, 1000]) {
          const input = Buffer.concat([fill, bytes(`${region}${sequence(rule, [count, count])}zz`)])
          expect(await screenOf(input, small, { guarded: true })).toEqual(await screenOf(input, small))
        }
      }
    },
  )

  it('REP: any count renders as unguarded for a one-column character, from any cell, wrapping or not', async () => {
    const start = fc.tuple(fc.integer({ min: 1, max: small.rows }), fc.integer({ min: 1, max: small.cols }))
    const count = fc.integer({ min: 1, max: 4 * small.rows * small.cols })
    const modes = fc.constantFrom('', '\x1b[?7l', '\x1b[4h', '\x1b[2;4r')
    await fc.assert(
      fc.asyncProperty(start, count, modes, async ([row, column], repeat, mode) => {
        const input = Buffer.concat([fill, bytes(`${mode}\x1b[${row};${column}Hq\x1b[${repeat}bZ`)])
        expect(await screenOf(input, small, { guarded: true })).toEqual(await screenOf(input, small))
      }),
      { numRuns: 150 },
    )
  })
})

/** The bytes end with a UTF-8 lead byte that still misses continuation bytes. */
function endsInsideCharacter(piece: Uint8Array): boolean {
  for (let back = 1; back <= 3 && back <= piece.length; back++) {
    const byte = piece[piece.length - back] as number
    if ((byte & 0xc0) === 0x80) continue
    const length = byte >= 0xc0 && byte <= 0xdf ? 2 : byte >= 0xe0 && byte <= 0xef ? 3 : byte >= 0xf0 && byte <= 0xf7 ? 4 : 0
    return length > back
  }
  return false
}
