import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ScrollbackRing, TerminalSanitizer } from '../src/output'
import { raw, utf8 } from './helpers'

function ringWith(lines: string[], options = { maxLines: 100, maxBytes: 10_000 }): ScrollbackRing {
  const ring = new ScrollbackRing(options)
  for (const line of lines) ring.push(line)
  return ring
}

const numbered = (count: number) => Array.from({ length: count }, (_, index) => `line ${index}`)

describe('ScrollbackRing bounds', () => {
  it('evicts the oldest lines beyond maxLines and counts them', () => {
    const ring = ringWith(numbered(10), { maxLines: 4, maxBytes: 10_000 })
    expect(ring.retainedLines).toBe(4)
    expect(ring.droppedLines).toBe(6)
    expect(ring.totalLines).toBe(10)
    expect(ring.read({ count: 100 }).text).toBe('line 6\nline 7\nline 8\nline 9')
  })

  it('evicts by UTF-8 bytes, one newline per line included', () => {
    // Each 'é' is 2 bytes: a line of three is 6 bytes + 1 newline.
    const ring = ringWith(['ééé', 'ééé', 'ééé'], { maxLines: 100, maxBytes: 14 })
    expect(ring.retainedLines).toBe(2)
    expect(ring.retainedBytes).toBe(14)
    ring.push('x')
    expect(ring.retainedLines).toBe(2)
    expect(ring.retainedBytes).toBe(9)
  })

  it('bounds one line longer than the whole budget to its tail, on a code-point boundary', () => {
    const ring = ringWith(['keep?', 'ab' + '😀'.repeat(10)], { maxLines: 100, maxBytes: 11 })
    // 10 bytes for text + 1 newline: two emoji (8 bytes) fit, a third would not.
    expect(ring.retainedLines).toBe(1)
    expect(ring.retainedBytes).toBeLessThanOrEqual(11)
    const page = ring.read({ count: 1 })
    expect(page.text).toBe('😀😀')
    expect(page.truncated).toBe(true)
  })

  it('grows its storage past the initial capacity and keeps order', () => {
    const ring = ringWith(numbered(5000), { maxLines: 3000, maxBytes: 1 << 20 })
    expect(ring.read({ count: 2, offset: 0 }).text).toBe('line 4998\nline 4999')
    expect(ring.read({ count: 1, offset: 2999 }).text).toBe('line 2000')
  })

  it('rejects invalid bounds and requests', () => {
    expect(() => new ScrollbackRing({ maxLines: 0, maxBytes: 10 })).toThrow(RangeError)
    expect(() => new ScrollbackRing({ maxLines: 10, maxBytes: 1.5 })).toThrow(RangeError)
    expect(() => ringWith([]).read({ count: -1 })).toThrow(RangeError)
  })
})

describe('ScrollbackRing paging', () => {
  it('pages back from the newest line with absolute line numbers', () => {
    const ring = ringWith(numbered(10))
    expect(ring.read({ count: 3 })).toEqual({ text: 'line 7\nline 8\nline 9', totalLines: 10, lineBegin: 7, lineEnd: 10, truncated: false })
    expect(ring.read({ offset: 3, count: 3 })).toMatchObject({ text: 'line 4\nline 5\nline 6', lineBegin: 4, lineEnd: 7 })
    expect(ring.read({ offset: 8, count: 5 })).toMatchObject({ text: 'line 0\nline 1', lineBegin: 0, lineEnd: 2, truncated: false })
    expect(ring.read({ offset: 50, count: 5 })).toMatchObject({ text: '', lineBegin: 0, lineEnd: 0, truncated: false })
    expect(ring.read({ count: 0 })).toMatchObject({ text: '', lineBegin: 10, lineEnd: 10 })
  })

  it('marks truncated only the pages that reach evicted lines, never stickily', () => {
    const ring = ringWith(numbered(10), { maxLines: 4, maxBytes: 10_000 })
    expect(ring.read({ count: 4 })).toMatchObject({ lineBegin: 6, lineEnd: 10, truncated: false })
    expect(ring.read({ count: 5 })).toMatchObject({ text: 'line 6\nline 7\nline 8\nline 9', lineBegin: 6, truncated: true })
    expect(ring.read({ offset: 6, count: 2 })).toMatchObject({ text: '', lineBegin: 4, lineEnd: 4, truncated: true })
    expect(ring.read({ offset: 1, count: 2 })).toMatchObject({ lineBegin: 7, lineEnd: 9, truncated: false })
    ring.push('line 10')
    expect(ring.read({ count: 3 }).truncated).toBe(false)
  })

  it('shortens a page to whole lines under maxBytes without calling it truncated', () => {
    const ring = ringWith(['aaaa', 'bbbb', 'cccc'])
    expect(ring.read({ count: 3, maxBytes: 9 })).toMatchObject({ text: 'bbbb\ncccc', lineBegin: 1, lineEnd: 3, truncated: false })
    expect(ring.read({ count: 3, maxBytes: 8 })).toMatchObject({ text: 'cccc', lineBegin: 2, truncated: false })
  })

  it('cuts an oversized newest line to its tail and says so', () => {
    const ring = ringWith(['older', 'x'.repeat(10) + '😀'])
    const page = ring.read({ count: 2, maxBytes: 6 })
    expect(page).toMatchObject({ text: 'xx😀', lineBegin: 1, lineEnd: 2, truncated: true })
    expect(ring.read({ count: 2, maxBytes: 3 }).text).toBe('')
  })

  it('includes the live current line as the newest line, as it is rewritten', () => {
    const sanitizer = new TerminalSanitizer()
    const ring = new ScrollbackRing({ maxLines: 100, maxBytes: 10_000 })
    ring.append(sanitizer.write(raw('one\ntwo\n10%')))
    expect(ring.read({ count: 10 })).toMatchObject({ text: 'one\ntwo\n10%', totalLines: 3, lineEnd: 3 })
    ring.append(sanitizer.write(raw('\r55%')))
    expect(ring.read({ count: 1 }).text).toBe('55%')
    ring.append(sanitizer.write(raw('\r100%\n')))
    expect(ring.read({ count: 10 })).toMatchObject({ text: 'one\ntwo\n100%', totalLines: 3 })
    ring.append(sanitizer.write(raw('\x1b]133;D;0\x07dsh> ')))
    expect(ring.read({ count: 2 })).toMatchObject({ text: '100%\ndsh> ', totalLines: 4, lineBegin: 2 })
  })

  it('carries clipping from the sanitizer into the pages that include the line', () => {
    const sanitizer = new TerminalSanitizer({ maxLineLength: 4 })
    const ring = new ScrollbackRing({ maxLines: 100, maxBytes: 10_000 })
    ring.append(sanitizer.write(utf8('abcdefgh\nok\n')))
    expect(ring.read({ count: 1 })).toMatchObject({ text: 'ok', truncated: false })
    expect(ring.read({ count: 2 })).toMatchObject({ text: 'efgh\nok', truncated: true })
    ring.append(sanitizer.write(utf8('123456')))
    expect(ring.read({ count: 1 })).toMatchObject({ text: '3456', truncated: true })
  })
})

describe('ScrollbackRing properties', () => {
  it('takes chunks exactly as it takes the same lines one by one, floods included', () => {
    const text = fc.string({ unit: fc.constantFrom('a', 'é', '😀', '\r\n', '\n', '\r', 'long line '), maxLength: 200 })
    fc.assert(
      fc.property(
        fc.array(text, { maxLength: 8 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 80 }),
        fc.option(fc.integer({ min: 1, max: 10 }), { nil: undefined }),
        (chunks, maxLines, maxBytes, maxLineLength) => {
          const sanitizer = new TerminalSanitizer(maxLineLength === undefined ? {} : { maxLineLength })
          const byChunk = new ScrollbackRing({ maxLines, maxBytes })
          const byLine = new ScrollbackRing({ maxLines, maxBytes })
          // The final newline empties the current line, which only the chunk-fed ring would show.
          for (const chunk of [...chunks, '\n']) {
            const out = sanitizer.write(utf8(chunk))
            byChunk.append(out)
            for (const [index, line] of out.lines.entries()) byLine.push(line, out.clipped.includes(index))
          }
          expect(byChunk.droppedLines).toBe(byLine.droppedLines)
          expect(byChunk.retainedBytes).toBe(byLine.retainedBytes)
          expect(byChunk.read({ count: 100, maxBytes: 1000 })).toEqual(byLine.read({ count: 100, maxBytes: 1000 }))
        },
      ),
      { numRuns: 500 },
    )
  })

  const line = fc.string({ unit: fc.constantFrom('a', 'é', '漢', '😀'), maxLength: 12 })

  it('returns exactly the retained lines of the requested window, within every cap', () => {
    fc.assert(
      fc.property(
        fc.array(line, { maxLength: 80 }),
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 1, max: 120 }),
        fc.nat(90),
        fc.nat(30),
        fc.integer({ min: 0, max: 150 }),
        (lines, maxLines, maxBytes, offset, count, pageBytes) => {
          const ring = ringWith(lines, { maxLines, maxBytes })
          expect(ring.retainedLines).toBeLessThanOrEqual(maxLines)
          expect(ring.retainedBytes).toBeLessThanOrEqual(maxBytes)
          const page = ring.read({ offset, count, maxBytes: pageBytes })
          expect(Buffer.byteLength(page.text)).toBeLessThanOrEqual(pageBytes)
          expect(page.totalLines).toBe(lines.length)
          expect(page.lineEnd - page.lineBegin).toBeLessThanOrEqual(count)
          const end = Math.max(0, lines.length - offset)
          const wanted = lines.slice(Math.max(0, end - count), end)
          const got = lines.slice(page.lineBegin, page.lineEnd)
          const begin = Math.max(0, end - count)
          const newest = lines[end - 1]
          const lossless =
            lines.every((text) => Buffer.byteLength(text) + 1 <= maxBytes) &&
            (begin >= ring.droppedLines || begin === end) &&
            (newest === undefined || begin === end || Buffer.byteLength(newest) <= pageBytes)
          if (lossless) expect(page.truncated).toBe(false)
          if (!page.truncated) {
            // Nothing lost: the page is the newest whole lines of the window.
            expect(page.text).toBe(got.join('\n'))
            expect(page.lineEnd).toBe(end)
            expect(wanted.slice(wanted.length - got.length)).toEqual(got)
          } else {
            // Something lost (retention or a cut): every returned line is still the tail of the true line.
            const returned = page.lineEnd > page.lineBegin ? page.text.split('\n') : []
            expect(returned).toHaveLength(got.length)
            for (const [index, text] of returned.entries()) expect((got[index] as string).endsWith(text)).toBe(true)
          }
        },
      ),
      { numRuns: 1000 },
    )
  })
})
