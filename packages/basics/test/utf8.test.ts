import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { dropUtf8Head, fitTailAndTrailer, keepUtf8Head, keepUtf8Tail, utf8ByteLength } from '../src'

const bytes = (text: string) => Buffer.byteLength(text, 'utf8')
const lonelyHigh = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])/
const lonelyLow = /(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

describe('utf8ByteLength', () => {
  it('measures UTF-8 bytes, not UTF-16 units', () => {
    expect(utf8ByteLength('')).toBe(0)
    expect(utf8ByteLength('abc')).toBe(3)
    expect(utf8ByteLength('aé€😀')).toBe(1 + 2 + 3 + 4)
    expect(utf8ByteLength('\uD800')).toBe(3)
  })
})

describe('keepUtf8Tail and keepUtf8Head', () => {
  it('keep the tail without splitting a code point', () => {
    expect(keepUtf8Tail('hello world', 5)).toBe('world')
    expect(keepUtf8Tail('short', 100)).toBe('short')
    expect(keepUtf8Tail('a😀b', 3)).toBe('b')
    expect(keepUtf8Tail('a😀b', 5)).toBe('😀b')
    expect(keepUtf8Tail('ééé', 3)).toBe('é')
    expect(keepUtf8Tail('ab😀', 4)).toBe('😀')
    expect(keepUtf8Tail('😀x', 4)).toBe('x')
    expect(keepUtf8Tail('anything', 0)).toBe('')
  })

  it('keep the head without splitting a code point', () => {
    expect(keepUtf8Head('hello world', 5)).toBe('hello')
    expect(keepUtf8Head('a😀b', 4)).toBe('a')
    expect(keepUtf8Head('a😀b', 5)).toBe('a😀')
    expect(keepUtf8Head('€€', 5)).toBe('€')
    expect(keepUtf8Head('aé€', 3)).toBe('aé')
    expect(keepUtf8Head('x', 0)).toBe('')
  })

  it('keep a lone surrogate as it is, counted as 3 bytes', () => {
    expect(keepUtf8Tail('a\uDC00b', 4)).toBe('\uDC00b')
    expect(keepUtf8Head('a\uD800b', 4)).toBe('a\uD800')
  })

  it('take a fractional budget as its floor, and reject a negative or NaN one', () => {
    expect(keepUtf8Tail('€€', 5.9)).toBe('€')
    expect(() => keepUtf8Tail('x', -1)).toThrow(RangeError)
    expect(() => keepUtf8Head('x', Number.NaN)).toThrow(RangeError)
  })

  it('keep the longest suffix that fits, for any text and budget', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 60 }), fc.nat(200), (text, max) => {
        const tail = keepUtf8Tail(text, max)
        expect(text.endsWith(tail)).toBe(true)
        expect(bytes(tail)).toBeLessThanOrEqual(max)
        const codePoints = [...text]
        const kept = [...tail].length
        if (kept < codePoints.length) expect(bytes(codePoints.slice(codePoints.length - kept - 1).join(''))).toBeGreaterThan(max)
      }),
    )
  })

  it('keep the longest prefix that fits, for any text and budget', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 60 }), fc.nat(200), (text, max) => {
        const head = keepUtf8Head(text, max)
        expect(text.startsWith(head)).toBe(true)
        expect(bytes(head)).toBeLessThanOrEqual(max)
        const codePoints = [...text]
        const kept = [...head].length
        if (kept < codePoints.length) expect(bytes(codePoints.slice(0, kept + 1).join(''))).toBeGreaterThan(max)
      }),
    )
  })

  it('never leave half a surrogate pair, for any mix of 1- to 4-byte code points', () => {
    const text = fc.string({ unit: fc.constantFrom('a', 'é', '€', '😀', '𝄞'), maxLength: 40 })
    fc.assert(
      fc.property(text, fc.nat(200), (value, budget) => {
        const tail = keepUtf8Tail(value, budget)
        const head = keepUtf8Head(value, budget)
        expect(bytes(tail)).toBeGreaterThan(Math.min(budget, bytes(value)) - 4)
        expect(bytes(head)).toBeGreaterThan(Math.min(budget, bytes(value)) - 4)
        expect(tail).not.toMatch(lonelyLow)
        expect(head).not.toMatch(lonelyHigh)
      }),
    )
  })

  it('bound a large text in time proportional to the budget', () => {
    const huge = `${'x'.repeat(8 * 1024 * 1024)}END`
    expect(keepUtf8Tail(huge, 3)).toBe('END')
    expect(keepUtf8Head(huge, 2)).toBe('xx')
  })
})

describe('dropUtf8Head', () => {
  it('drops at least the requested head bytes, a straddling code point whole', () => {
    expect(dropUtf8Head('😀ab', 1)).toEqual({ text: 'ab', removed: 4 })
    expect(dropUtf8Head('a😀b', 1)).toEqual({ text: '😀b', removed: 1 })
    expect(dropUtf8Head('é€', 3)).toEqual({ text: '', removed: 5 })
    expect(dropUtf8Head('abc', 10)).toEqual({ text: '', removed: 3 })
  })

  it('leaves a well-formed suffix whose size is exactly what was not removed', () => {
    const text = fc.string({ unit: fc.constantFrom('a', 'é', '€', '😀', '𝄞'), maxLength: 40 })
    fc.assert(
      fc.property(text, fc.nat(200), (value, budget) => {
        const cut = dropUtf8Head(value, budget)
        expect(value.endsWith(cut.text)).toBe(true)
        expect(bytes(cut.text)).toBe(bytes(value) - cut.removed)
        expect(bytes(cut.text)).toBeLessThanOrEqual(Math.max(0, bytes(value) - budget))
        expect(cut.text).not.toMatch(lonelyLow)
      }),
    )
  })
})

describe('fitTailAndTrailer', () => {
  it('keeps the trailer whole and the body tail', () => {
    expect(fitTailAndTrailer('0123456789', '\n[done]', 12)).toEqual({ text: '56789\n[done]', truncated: true })
    expect(fitTailAndTrailer('abc', '\n[done]', 100)).toEqual({ text: 'abc\n[done]', truncated: false })
    expect(fitTailAndTrailer('abc', '\n[a very long trailer]', 6)).toEqual({ text: '\n[a ve', truncated: true })
  })

  it('stays within the budget and says whether it cut, for any body, trailer and budget', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme', maxLength: 10 }), fc.nat(80), (body, trailer, max) => {
        const fitted = fitTailAndTrailer(body, trailer, max)
        expect(bytes(fitted.text)).toBeLessThanOrEqual(max)
        if (bytes(trailer) <= max) expect(fitted.text.endsWith(trailer)).toBe(true)
        expect(fitted.truncated).toBe(fitted.text !== body + trailer)
      }),
    )
  })
})
