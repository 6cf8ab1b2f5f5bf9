import { Buffer } from 'node:buffer'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { utf8ByteLength } from 'dsh-basics'
import { shapeOutput } from 'dsh-tools'

// Lines missing from the middle of a text (an upstream bound kept a head and a tail): they are always
// inside the one elision, counted in every size, and never hidden in a fold.

const ELISION = /^\[… (\d+) lines? \(([^)]+)\) left out(?:; (.*) returns (?:them|it))?\]$/
const head = Array.from({ length: 10 }, (_, index) => `h${index + 1}`)
const tail = Array.from({ length: 20 }, (_, index) => `t${index + 1}`)
const text = [...head, ...tail].join('\n')
const gap = { after: head.length - 1, lines: 1000, bytes: 5000 }

describe('shapeOutput with lines missing from the text', () => {
  it('names the missing lines even when everything else fits', () => {
    const shape = shapeOutput(text, { maxBytes: 10_000, firstLine: 7, gap, readCall: (fromLine, count) => `read ${fromLine}+${count}` })
    expect(shape.text).toBe([...head, '[… 1000 lines (4.9 KiB) left out; read 17+1000 returns them]', ...tail].join('\n'))
    expect(shape).toMatchObject({
      lines: 1030,
      bytes: utf8ByteLength(text) + 5000,
      omittedLines: 1000,
      omittedBytes: 5000,
      omitted: { fromLine: 17, count: 1000 },
      truncated: true,
    })
  })

  it('sizes the read call for the kept lines after the missing ones exactly, and for more only as an upper bound', () => {
    const asked: [number, number, number][] = []
    const readCall = (fromLine: number, count: number, bytes: number) => (asked.push([fromLine, count, bytes]), `read ${fromLine}+${count}`)
    // firstLine 1: h1…h10 are lines 1–10, the missing ones 11–1010, t1…t20 lines 1011–1030.
    const kept = shapeOutput(text, { maxBytes: 120, firstLine: 1, gap, readCall, oldestLine: 1015 })
    const [fromLine, count, bytes] = asked.at(-1)!
    expect(fromLine).toBe(1015)
    const keptLines = tail.slice(4, 4 + count)
    expect(bytes).toBe(utf8ByteLength(keptLines.join('\n')) + 1)
    expect(kept.text).toContain(`are no longer kept; read 1015+${count} returns the last ${count === 1 ? 'one' : count}]`)
    // Kept lines that reach back into the missing ones: all the left-out bytes.
    asked.length = 0
    const reaching = shapeOutput(text, { maxBytes: 120, firstLine: 1, gap, readCall, oldestLine: 900 })
    expect(asked.at(-1)![2]).toBe(reaching.omittedBytes)
  })

  it('under a small budget leaves out the missing lines with the head and tail lines around them', () => {
    const shape = shapeOutput(text, { maxBytes: 90, firstLine: 1, gap })
    expect(utf8ByteLength(shape.text)).toBeLessThanOrEqual(90)
    const lines = shape.text.split('\n')
    const at = lines.findIndex((line) => ELISION.test(line))
    const shownHead = lines.slice(0, at)
    const shownTail = lines.slice(at + 1)
    expect(shownHead).toEqual(head.slice(0, shownHead.length))
    expect(shownTail).toEqual(tail.slice(tail.length - shownTail.length))
    const count = Number(ELISION.exec(lines[at]!)![1])
    expect(count).toBe(head.length - shownHead.length + 1000 + tail.length - shownTail.length)
    expect(shape.omitted).toEqual({ fromLine: 1 + shownHead.length, count })
    expect(shownHead.length + count + shownTail.length).toBe(shape.lines)
  })

  it('never folds across the missing lines', () => {
    const same = 'the same line of output'
    const repeated = ['a', ...Array.from({ length: 10 }, () => same), 'z'].join('\n')
    const shape = shapeOutput(repeated, { maxBytes: 10_000, gap: { after: 5, lines: 3, bytes: 15 } })
    expect(shape.text).toBe(['a', same, '[… 4 more identical lines]', '[… 3 lines (15 bytes) left out]', same, '[… 4 more identical lines]', 'z'].join('\n'))
    expect(shape.foldedLines).toBe(8)
  })

  it('refuses a gap outside the text and ignores an empty one', () => {
    expect(() => shapeOutput('a\nb', { maxBytes: 100, gap: { after: 1, lines: 1, bytes: 2 } })).toThrow(RangeError)
    expect(() => shapeOutput('a\nb', { maxBytes: 100, gap: { after: -1, lines: 1, bytes: 2 } })).toThrow(RangeError)
    expect(() => shapeOutput('a\nb', { maxBytes: 100, gap: { after: 0, lines: 1.5, bytes: 2 } })).toThrow(RangeError)
    expect(shapeOutput('a\nb', { maxBytes: 100, gap: { after: 0, lines: 0, bytes: 0 } }).text).toBe('a\nb')
  })

  it('keeps every invariant for any head, tail, gap and budget (property)', () => {
    const line = fc.string({ unit: fc.constantFrom('a', 'b', '漢', '😀', 'e\u0301'), maxLength: 12 })
    fc.assert(
      fc.property(
        fc.array(line, { minLength: 1, maxLength: 30 }),
        fc.array(line, { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 1, max: 500 }),
        fc.integer({ min: 0, max: 400 }),
        (before, after, missing, maxBytes) => {
          const input = [...before, ...after].join('\n')
          const hole = { after: before.length - 1, lines: missing, bytes: missing * 4 }
          const shape = shapeOutput(input, { maxBytes, gap: hole, firstLine: 1 })
          expect(utf8ByteLength(shape.text)).toBeLessThanOrEqual(maxBytes)
          expect(Buffer.from(shape.text).toString()).toBe(shape.text)
          expect(shape.lines).toBe(before.length + after.length + missing)
          expect(shape.bytes).toBe(utf8ByteLength(input) + missing * 4)
          expect(shape.truncated).toBe(true)
          expect(shape.omittedLines).toBeGreaterThanOrEqual(missing)
          expect(shape.omittedBytes).toBeGreaterThanOrEqual(missing * 4)
          const lines = shape.text.split('\n')
          const at = lines.findIndex((candidate) => ELISION.test(candidate))
          if (at >= 0) {
            // Whole head lines before the elision, whole tail lines after it (the last one possibly cut).
            expect(lines.slice(0, at)).toEqual(before.slice(0, at))
            const shownTail = lines.slice(at + 1)
            expect(shownTail.slice(0, -1)).toEqual(after.slice(after.length - shownTail.length, -1))
            expect(shape.omitted?.fromLine).toBe(1 + at)
          } else expect(input.endsWith(shape.text)).toBe(true)
        },
      ),
      { numRuns: 400 },
    )
  })
})
