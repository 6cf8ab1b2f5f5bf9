import { Buffer } from 'node:buffer'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { TerminalSanitizer } from '../src/output'
import { cellWidth } from '../src/output/width'
import { raw, render, utf8 } from './helpers'

const text = (value: string) => fc.constant(utf8(value))
const bytes = (value: string) => fc.constant(raw(value))
const word = fc.string({ unit: fc.constantFrom(...'abcxyz 0189%./-'.split('')), minLength: 1, maxLength: 12 }).map(utf8)
const multibyte = fc.constantFrom('é', '€', '漢', '𝄞', '😀', '👩‍💻', '\u0800', '\uFFFD', '\u0085', '\u009b', '\u0080').map(utf8)
const brokenUtf8 = fc.constantFrom('\xc2', '\xe2\x82', '\xf0\x9f\x98', '\xed\xa0\x80', '\xc0\xaf', '\xf4\x90\x80\x80', '\x9b', '\xa0').map(raw)
const param = fc.integer({ min: 0, max: 120 }).map(String)
const csi = fc
  .tuple(fc.constantFrom('', '?', '>'), fc.array(param, { maxLength: 3 }), fc.constantFrom('', ' ', '!'), fc.constantFrom(...'mKGCDHJAhlqpPX@`a'.split('')))
  .map(([marker, params, intermediate, final]) => raw(`\x1b[${marker}${params.join(';')}${intermediate}${final}`))
const eightBitCsi = fc.tuple(param, fc.constantFrom('m', 'K', 'G')).map(([value, final]) => raw(`\x9b${value}${final}`))
const terminator = fc.constantFrom('\x07', '\x1b\\')
const osc = fc
  .tuple(fc.constantFrom('0;title', '8;;https://example.com', '52;c;aGVsbG8=', '133;A', '133;D;', 'x'.repeat(40)), terminator)
  .map(([body, end]) => raw(`\x1b]${body}${end}`))
const marker = fc
  .tuple(fc.option(fc.integer({ min: 0, max: 255 }), { nil: undefined }), terminator)
  .map(([status, end]) => raw(`\x1b]133;D${status === undefined ? '' : `;${status}`}${end}`))
const controlString = fc
  .tuple(fc.constantFrom('P', 'X', '^', '_'), fc.constantFrom('q#0;2;0;0;0', 'payload', '1$r'), terminator)
  .map(([kind, body, end]) => raw(`\x1b${kind}${body}${end}`))
const screenSwitch = fc.constantFrom('\x1b[?1049h', '\x1b[?1049l', '\x1b[?47h', '\x1b[?1047l').map(raw)
const escapeSequence = fc.constantFrom('\x1b(B', '\x1b)0', '\x1b#8', '\x1b7', '\x1b8', '\x1b=', '\x1bE', '\x1bM', '\x1bc').map(raw)
/** Cases the transition table tells apart: a misplaced private marker, controls and high bytes inside a sequence, an aborted string. */
const tableEdge = fc
  .constantFrom(
    '\x1b[1?h',
    '\x1b[??1049h',
    '\x1b[?1;1049h',
    '\x1b[3\r1mX',
    '\x1b[2\n5GX',
    '\x1b[1\t2CX',
    '\x1b[1\x7f2DX',
    '\x1b[12\x1b[KX',
    '\x1b[1\x18X',
    '\x1b(\x9b2KX',
    '\x1b#\xc3\xa9',
    '\x1b\xe2\x82\xac',
    '\x1b[1;\xc2\x85X',
    '\x1b]0;t\x1b[2K',
    '\x1b]0;t\x1b\x1b\\X',
    '\x1bP1\x1b]133;D;0\x07',
    '\x1b_x\x1bEy',
  )
  .map(raw)
const control = fc.constantFrom('\n', '\r\n', '\r', '\b', '\t', '\x07', '\x00', '\x7f', '\x0b', '\x18', '\x1b').map(raw)
/** Long runs of printable ASCII, with a TAB or DEL now and then: what the four-bytes-at-once test skips over. */
const longText = fc.string({ unit: fc.constantFrom(...'abcXYZ09 ~!"{}\\'.split(''), '\t', '\x7f'), minLength: 8, maxLength: 200 }).map((value) => raw(value))
const anyByte = fc.integer({ min: 0, max: 255 }).map((value) => Uint8Array.of(value))
const highByte = fc.integer({ min: 0x80, max: 0xff }).map((value) => Uint8Array.of(value))

/** A byte stream made of terminal-shaped tokens: text, every sequence family, and noise. */
const stream = fc
  .array(
    fc.oneof(
      { weight: 6, arbitrary: word },
      { weight: 2, arbitrary: longText },
      { weight: 3, arbitrary: multibyte },
      { weight: 1, arbitrary: brokenUtf8 },
      { weight: 4, arbitrary: control },
      { weight: 2, arbitrary: csi },
      { weight: 1, arbitrary: eightBitCsi },
      { weight: 1, arbitrary: osc },
      { weight: 2, arbitrary: marker },
      { weight: 1, arbitrary: controlString },
      { weight: 1, arbitrary: escapeSequence },
      { weight: 1, arbitrary: tableEdge },
      { weight: 1, arbitrary: screenSwitch },
      { weight: 1, arbitrary: text('dsh> ') },
      { weight: 1, arbitrary: bytes('10%\r20%\r100%\n') },
      { weight: 1, arbitrary: anyByte },
      { weight: 1, arbitrary: highByte },
    ),
    { maxLength: 60 },
  )
  .map((tokens) => Buffer.concat(tokens))

/** Cut points, as fractions so they scale with the stream. */
const cuts = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 12 })

function split(input: Buffer, fractions: number[]): Buffer[] {
  const points = [...new Set(fractions.map((fraction) => Math.floor(fraction * input.length)))].sort((a, b) => a - b)
  const chunks: Buffer[] = []
  let start = 0
  for (const point of points) {
    chunks.push(input.subarray(start, point))
    start = point
  }
  chunks.push(input.subarray(start))
  return chunks
}

describe('TerminalSanitizer properties', () => {
  it('renders any split of a stream exactly like the whole stream', () => {
    fc.assert(
      fc.property(stream, cuts, (input, fractions) => {
        expect(render(split(input, fractions))).toEqual(render([input]))
      }),
      { numRuns: 1500 },
    )
  })

  it('stays split-invariant with a tiny line cap, where heads are dropped and rewritten', () => {
    fc.assert(
      fc.property(stream, cuts, fc.integer({ min: 1, max: 12 }), (input, fractions, maxLineLength) => {
        expect(render(split(input, fractions), { maxLineLength })).toEqual(render([input], { maxLineLength }))
      }),
      { numRuns: 1500 },
    )
  })

  it('drops a joiner with the character it joins when a chunk ended between them and the cap cuts both', () => {
    // A counterexample the property above once found: 👩 ends one chunk, ZWJ and 💻 start the next,
    // and a 2-column cap drops 👩: its joiner must go too, as when the stream arrives whole.
    const input = Buffer.from('10%\r20%\r100%\n👩\u200d💻')
    const cut = input.length - Buffer.byteLength('\u200d💻')
    expect(render([input.subarray(0, cut), input.subarray(cut)], { maxLineLength: 2 })).toEqual(render([input], { maxLineLength: 2 }))
    expect(render([input], { maxLineLength: 2 }).text).toBe('0%\n💻')
  })

  it('matches byte-at-a-time feeding, the slowest path through the state machine', () => {
    fc.assert(
      fc.property(stream, (input) => {
        expect(render([...input].map((value) => Uint8Array.of(value)))).toEqual(render([input]))
      }),
      { numRuns: 300 },
    )
  })

  it('renders a stream the same from every alignment of its memory (the word test reads whole 4-byte words)', () => {
    fc.assert(
      fc.property(stream, (input) => {
        const expected = render([...input].map((value) => Uint8Array.of(value)))
        for (let offset = 0; offset < 4; offset++) {
          const placed = new Uint8Array(new ArrayBuffer(input.length + 4), offset, input.length)
          placed.set(input)
          expect(render([placed])).toEqual(expected)
        }
      }),
      { numRuns: 300 },
    )
  })

  it('looks at every byte of a word that holds 0xFF, wherever it sits (0xFF + 1 carries out of the word)', () => {
    for (let offset = 0; offset < 4; offset++) {
      for (let at = 60; at < 68; at++) {
        const placed = new Uint8Array(new ArrayBuffer(132), offset, 128).fill(0x61)
        placed[at] = 0xff
        expect(render([placed])).toEqual(render([...placed].map((value) => Uint8Array.of(value))))
      }
    }
  })

  it('never emits ESC, C0 controls other than TAB, C1 code points, or lone surrogates', () => {
    fc.assert(
      fc.property(stream, (input) => {
        const out = render([input]).text
        expect(out).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/)
        expect(out).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/)
      }),
      { numRuns: 500 },
    )
  })

  it('reports the UTF-8 size of every line it completes, and of the current line', () => {
    fc.assert(
      fc.property(stream, cuts, fc.option(fc.integer({ min: 1, max: 12 }), { nil: undefined }), (input, fractions, maxLineLength) => {
        const sanitizer = new TerminalSanitizer(maxLineLength === undefined ? {} : { maxLineLength })
        for (const part of split(input, fractions)) {
          const chunk = sanitizer.write(part)
          expect(chunk.sizes).toEqual(chunk.lines.map((line) => Buffer.byteLength(line)))
          expect(sanitizer.line.utf8Length()).toBe(Buffer.byteLength(sanitizer.line.text()))
        }
      }),
      { numRuns: 500 },
    )
  })

  it('retains at most the cap of every line', () => {
    fc.assert(
      fc.property(stream, fc.integer({ min: 1, max: 12 }), (input, maxLineLength) => {
        for (const line of render([input], { maxLineLength }).text.split('\n')) {
          // Zero-width code points join a character and take no column of their own.
          expect([...line].filter((character) => cellWidth(character.codePointAt(0) as number) > 0).length).toBeLessThanOrEqual(maxLineLength)
        }
      }),
      { numRuns: 500 },
    )
  })
})
