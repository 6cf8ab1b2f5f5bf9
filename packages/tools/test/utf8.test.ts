import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { fitTail, truncateUtf8Head, truncateUtf8Tail, utf8ByteLength } from 'dsh-tools'

const bytes = (text: string) => Buffer.byteLength(text, 'utf8')

describe('utf8 helpers', () => {
  it('measures UTF-8 bytes, not UTF-16 units', () => {
    expect(utf8ByteLength('')).toBe(0)
    expect(utf8ByteLength('abc')).toBe(3)
    expect(utf8ByteLength('é')).toBe(2)
    expect(utf8ByteLength('€')).toBe(3)
    expect(utf8ByteLength('😀')).toBe(4)
  })

  it('keeps the tail without splitting a code point', () => {
    expect(truncateUtf8Tail('hello world', 5)).toBe('world')
    expect(truncateUtf8Tail('short', 100)).toBe('short')
    // '😀' is 4 bytes: 3 bytes of budget cannot hold it, so only the ASCII after it survives.
    expect(truncateUtf8Tail('a😀b', 3)).toBe('b')
    expect(truncateUtf8Tail('a😀b', 5)).toBe('😀b')
    expect(truncateUtf8Tail('ééé', 3)).toBe('é')
    expect(truncateUtf8Tail('anything', 0)).toBe('')
  })

  it('keeps the head without splitting a code point', () => {
    expect(truncateUtf8Head('hello world', 5)).toBe('hello')
    expect(truncateUtf8Head('a😀b', 4)).toBe('a')
    expect(truncateUtf8Head('a😀b', 5)).toBe('a😀')
    expect(truncateUtf8Head('€€', 5)).toBe('€')
  })

  it('rejects a negative or NaN budget', () => {
    expect(() => truncateUtf8Tail('x', -1)).toThrow(RangeError)
    expect(() => truncateUtf8Head('x', Number.NaN)).toThrow(RangeError)
  })

  it('tail truncation is the longest suffix that fits, for any text and budget', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 60 }), fc.nat(200), (text, max) => {
        const tail = truncateUtf8Tail(text, max)
        expect(text.endsWith(tail)).toBe(true)
        expect(bytes(tail)).toBeLessThanOrEqual(max)
        const codePoints = [...text]
        const kept = [...tail].length
        if (kept < codePoints.length) {
          // One more code point would not have fitted.
          expect(bytes(codePoints.slice(codePoints.length - kept - 1).join(''))).toBeGreaterThan(max)
        }
      }),
    )
  })

  it('head truncation is the longest prefix that fits, for any text and budget', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 60 }), fc.nat(200), (text, max) => {
        const head = truncateUtf8Head(text, max)
        expect(text.startsWith(head)).toBe(true)
        expect(bytes(head)).toBeLessThanOrEqual(max)
        const codePoints = [...text]
        const kept = [...head].length
        if (kept < codePoints.length) expect(bytes(codePoints.slice(0, kept + 1).join(''))).toBeGreaterThan(max)
      }),
    )
  })

  it('bounds a large text in time proportional to the budget', () => {
    const huge = 'x'.repeat(8 * 1024 * 1024) + 'END'
    expect(truncateUtf8Tail(huge, 3)).toBe('END')
    expect(truncateUtf8Head(huge, 2)).toBe('xx')
  })

  it('fitTail keeps the trailer whole and the body tail', () => {
    expect(fitTail('0123456789', '\n[done]', 12)).toEqual({ text: '56789\n[done]', truncated: true })
    expect(fitTail('abc', '\n[done]', 100)).toEqual({ text: 'abc\n[done]', truncated: false })
    expect(fitTail('abc', '\n[a very long trailer]', 6)).toEqual({ text: '\n[a ve', truncated: true })
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme', maxLength: 10 }), fc.nat(80), (body, trailer, max) => {
        const fitted = fitTail(body, trailer, max)
        expect(bytes(fitted.text)).toBeLessThanOrEqual(max)
        if (bytes(trailer) <= max) expect(fitted.text.endsWith(trailer)).toBe(true)
        expect(fitted.truncated).toBe(fitted.text !== body + trailer)
      }),
    )
  })
})
