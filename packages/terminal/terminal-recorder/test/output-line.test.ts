import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { WRITER_THREAD_SOURCE } from '../src/writer-thread-source'

// The writer thread escapes output bytes itself, in one pass, instead of decoding them and asking
// JSON.stringify: its line must be exactly the one JSON.stringify of the decoded text would give.
const source = WRITER_THREAD_SOURCE.slice(WRITER_THREAD_SOURCE.indexOf('const ESCAPE'), WRITER_THREAD_SOURCE.indexOf('/** How many bytes at the end of'))
const outputLine = new Function('Buffer', `${source}; return outputLine;`)(Buffer) as (seconds: number, bytes: Buffer) => Buffer

function reference(seconds: number, bytes: Buffer): Buffer {
  return Buffer.from(`[${seconds.toFixed(6)}, "o", ${JSON.stringify(bytes.toString('utf8'))}]\n`, 'utf8')
}

/** Text heavy in what JSON escapes (every control, quote, backslash), beside DEL, multi-byte characters and plain ASCII. */
const escapable = fc.string({
  unit: fc.oneof(
    fc.integer({ min: 0, max: 0x1f }).map((code) => String.fromCharCode(code)),
    fc.constantFrom('"', '\\', '\x7f', 'é', '€', '😀', 'a', ' '),
    fc.string({ unit: 'grapheme' }),
  ),
  maxLength: 400,
})

describe('the writer thread’s output line', () => {
  it('equals JSON.stringify of the decoded text, byte for byte, whatever needs escaping', () => {
    fc.assert(
      fc.property(escapable, fc.double({ min: 0, max: 1e6, noNaN: true }), fc.integer({ min: 0, max: 7 }), (text, seconds, shift) => {
        // At every alignment: the line is built four bytes at a time from the first 4-byte boundary on.
        const encoded = Buffer.from(text, 'utf8')
        const bytes = Buffer.alloc(encoded.length + shift)
          .fill(0x41)
          .subarray(shift)
        encoded.copy(bytes)
        expect(outputLine(seconds, bytes).equals(reference(seconds, bytes))).toBe(true)
      }),
      { numRuns: 500 },
    )
  })

  it('grows past its first buffer when nearly every byte is a control', () => {
    const bytes = Buffer.alloc(10_000, 0x01)
    const line = outputLine(2, bytes)
    expect(line.equals(reference(2, bytes))).toBe(true)
    expect(line.length).toBe(bytes.length * 6 + '[2.000000, "o", ""]\n'.length)
  })

  it('escapes a lone control, quote or backslash among plain bytes wherever it falls in a word', () => {
    for (const special of [0x00, 0x0a, 0x1f, 0x22, 0x5c])
      for (let position = 0; position < 9; position++) {
        const bytes = Buffer.alloc(9, 0x7e)
        bytes[position] = special
        for (let shift = 0; shift < 4; shift++) expect(outputLine(0, bytes.subarray(shift)).equals(reference(0, bytes.subarray(shift)))).toBe(true)
      }
  })
})
