import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ScrollbackRing, TerminalSanitizer } from '../src/output'
import { utf8 } from './helpers'

function ringWith(lines: string[], options = { maxLines: 100, maxBytes: 10_000 }): ScrollbackRing {
  const ring = new ScrollbackRing(options)
  for (const line of lines) ring.push(line)
  return ring
}

const numbered = (count: number) => Array.from({ length: count }, (_, index) => `line ${index}`)

describe('ScrollbackRing forward reads', () => {
  it('reads count lines from an absolute line on, with the numbers a backward page uses', () => {
    const ring = ringWith(numbered(10))
    expect(ring.readFrom({ fromLine: 3, count: 3 })).toEqual({ text: 'line 3\nline 4\nline 5', totalLines: 10, lineBegin: 3, lineEnd: 6, truncated: false })
    expect(ring.readFrom({ fromLine: 8, count: 5 })).toMatchObject({ text: 'line 8\nline 9', lineBegin: 8, lineEnd: 10, truncated: false })
    const back = ring.read({ offset: 2, count: 4 })
    expect(ring.readFrom({ fromLine: back.lineBegin, count: back.lineEnd - back.lineBegin })).toEqual(back)
  })

  it('gives an empty page, not an error, from the end on or for no lines', () => {
    const ring = ringWith(numbered(10))
    expect(ring.readFrom({ fromLine: 10, count: 5 })).toEqual({ text: '', totalLines: 10, lineBegin: 10, lineEnd: 10, truncated: false })
    expect(ring.readFrom({ fromLine: 500, count: 5 })).toMatchObject({ text: '', lineBegin: 10, lineEnd: 10, truncated: false })
    expect(ring.readFrom({ fromLine: 4, count: 0 })).toMatchObject({ text: '', lineBegin: 4, lineEnd: 4, truncated: false })
    expect(new ScrollbackRing({ maxLines: 3, maxBytes: 30 }).readFrom({ fromLine: 0, count: 3 })).toMatchObject({ text: '', totalLines: 0, truncated: false })
  })

  it('starts at the oldest retained line when the window reaches evicted ones, and says so', () => {
    const ring = ringWith(numbered(10), { maxLines: 4, maxBytes: 10_000 })
    expect(ring.readFrom({ fromLine: 2, count: 6 })).toEqual({ text: 'line 6\nline 7', totalLines: 10, lineBegin: 6, lineEnd: 8, truncated: true })
    expect(ring.readFrom({ fromLine: 0, count: 3 })).toMatchObject({ text: '', lineBegin: 3, lineEnd: 3, truncated: true })
    expect(ring.readFrom({ fromLine: 6, count: 2 })).toMatchObject({ text: 'line 6\nline 7', truncated: false })
    // The numbers stay those of the session, however much was evicted.
    for (const line of numbered(100).slice(10)) ring.push(line)
    expect(ring.readFrom({ fromLine: 97, count: 2 })).toMatchObject({ text: 'line 97\nline 98', lineBegin: 97, lineEnd: 99, truncated: false })
  })

  it('keeps whole lines from its start under the byte cap, so lineEnd is where the next page starts', () => {
    const ring = ringWith(['aaaa', 'bbbb', 'cccc'])
    expect(ring.readFrom({ fromLine: 0, count: 3, maxBytes: 9 })).toMatchObject({ text: 'aaaa\nbbbb', lineBegin: 0, lineEnd: 2, truncated: false })
    expect(ring.readFrom({ fromLine: 0, count: 3, maxBytes: 8 })).toMatchObject({ text: 'aaaa', lineEnd: 1, truncated: false })
    expect(ring.readFrom({ fromLine: 2, count: 3, maxBytes: 8 })).toMatchObject({ text: 'cccc', lineBegin: 2, lineEnd: 3, truncated: false })
  })

  it('cuts only a line longer than the whole cap, alone on its page, at its head and never inside a UTF-8 sequence', () => {
    const ring = ringWith(['😀😀😀', 'x', 'é€😀'])
    expect(ring.readFrom({ fromLine: 0, count: 2, maxBytes: 6 })).toEqual({ text: '😀', totalLines: 3, lineBegin: 0, lineEnd: 1, truncated: true })
    expect(ring.readFrom({ fromLine: 0, count: 2, maxBytes: 3 })).toMatchObject({ text: '', lineBegin: 0, lineEnd: 1, truncated: true })
    expect(ring.readFrom({ fromLine: 2, count: 1, maxBytes: 8 })).toMatchObject({ text: 'é€', truncated: true })
    expect(ring.readFrom({ fromLine: 2, count: 1, maxBytes: 4 })).toMatchObject({ text: 'é', truncated: true })
    expect(ring.readFrom({ fromLine: 1, count: 2, maxBytes: 8 })).toMatchObject({ text: 'x', lineEnd: 2, truncated: false })
  })

  it('includes the live current line as the newest line, and carries clipping from the sanitizer', () => {
    const sanitizer = new TerminalSanitizer({ maxLineLength: 4 })
    const ring = new ScrollbackRing({ maxLines: 100, maxBytes: 10_000 })
    ring.append(sanitizer.write(utf8('one\nabcdefgh\nok\n10%')))
    expect(ring.readFrom({ fromLine: 2, count: 5 })).toEqual({ text: 'ok\n10%', totalLines: 4, lineBegin: 2, lineEnd: 4, truncated: false })
    expect(ring.readFrom({ fromLine: 1, count: 1 })).toMatchObject({ text: 'efgh', truncated: true })
    ring.append(sanitizer.write(utf8('\r55%')))
    expect(ring.readFrom({ fromLine: 3, count: 1 }).text).toBe('55%')
  })

  it('rejects negative or fractional requests', () => {
    const ring = ringWith(numbered(3))
    expect(() => ring.readFrom({ fromLine: -1, count: 1 })).toThrow(RangeError)
    expect(() => ring.readFrom({ fromLine: 0.5, count: 1 })).toThrow(RangeError)
    expect(() => ring.readFrom({ fromLine: 0, count: 1, maxBytes: -1 })).toThrow(RangeError)
  })
})

describe('ScrollbackRing forward read properties', () => {
  const line = fc.string({ unit: fc.constantFrom('a', 'é', '漢', '😀'), maxLength: 12 })

  it('returns the retained lines of the window from its start, as many whole ones as the cap allows', () => {
    fc.assert(
      fc.property(
        fc.array(line, { maxLength: 80 }),
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 1, max: 120 }),
        fc.nat(90),
        fc.nat(30),
        fc.integer({ min: 0, max: 150 }),
        (lines, maxLines, maxBytes, fromLine, count, pageBytes) => {
          const ring = ringWith(lines, { maxLines, maxBytes })
          const page = ring.readFrom({ fromLine, count, maxBytes: pageBytes })
          expect(Buffer.byteLength(page.text)).toBeLessThanOrEqual(pageBytes)
          expect(page.totalLines).toBe(lines.length)
          const end = Math.min(lines.length, fromLine + count)
          expect(page.lineBegin).toBe(Math.min(end, Math.max(fromLine, ring.droppedLines)))
          expect(page.lineEnd).toBeLessThanOrEqual(end)
          const got = lines.slice(page.lineBegin, page.lineEnd)
          const returned = page.lineEnd > page.lineBegin ? page.text.split('\n') : []
          expect(returned).toHaveLength(got.length)
          const reachesEvicted = fromLine < ring.droppedLines && fromLine < end
          const fitsRing = got.every((text) => Buffer.byteLength(text) + 1 <= maxBytes)
          // The first line as the ring holds it (its tail, when the ring had to clip it) is cut when it alone exceeds the cap.
          const held = ring.readFrom({ fromLine: page.lineBegin, count: 1, maxBytes: 1000 }).text
          const cut = got.length > 0 && Buffer.byteLength(held) > pageBytes
          expect(page.truncated).toBe(reachesEvicted || !fitsRing || cut)
          // Every line is (part of) its own line; whole ones when nothing was cut.
          for (const [index, text] of returned.entries()) expect((got[index] as string).includes(text)).toBe(true)
          if (fitsRing && !cut) expect(page.text).toBe(got.join('\n'))
          // A page of whole lines stopped early only because the next whole line would not fit.
          if (page.lineEnd > page.lineBegin && page.lineEnd < end && !cut) {
            const next = ring.readFrom({ fromLine: page.lineEnd, count: 1, maxBytes: 1000 }).text
            expect(Buffer.byteLength(page.text) + 1 + Buffer.byteLength(next)).toBeGreaterThan(pageBytes)
          }
        },
      ),
      { numRuns: 1000 },
    )
  })
})
