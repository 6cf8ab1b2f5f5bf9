import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { dropUtf8Head, keepUtf8Head, keepUtf8Tail, utf8Length } from '../src/output'

describe('UTF-8 budget helpers', () => {
  it('counts UTF-8 bytes', () => {
    expect(utf8Length('')).toBe(0)
    expect(utf8Length('aé€😀')).toBe(1 + 2 + 3 + 4)
  })

  it('keeps the longest tail that fits, never splitting a 4-byte emoji', () => {
    expect(keepUtf8Tail('ab😀', 6)).toBe('ab😀')
    expect(keepUtf8Tail('ab😀', 5)).toBe('b😀')
    expect(keepUtf8Tail('ab😀', 4)).toBe('😀')
    expect(keepUtf8Tail('ab😀', 3)).toBe('')
    expect(keepUtf8Tail('😀x', 4)).toBe('x')
    expect(keepUtf8Tail('x', 0)).toBe('')
  })

  it('keeps the longest head that fits, never splitting a 2-, 3- or 4-byte sequence', () => {
    expect(keepUtf8Head('😀ab', 6)).toBe('😀ab')
    expect(keepUtf8Head('😀ab', 5)).toBe('😀a')
    expect(keepUtf8Head('😀ab', 3)).toBe('')
    expect(keepUtf8Head('aé€', 3)).toBe('aé')
    expect(keepUtf8Head('aé€', 2)).toBe('a')
    expect(keepUtf8Head('x', 0)).toBe('')
  })

  it('drops at least the requested head bytes, a straddling code point whole', () => {
    expect(dropUtf8Head('😀ab', 1)).toEqual({ text: 'ab', removed: 4 })
    expect(dropUtf8Head('a😀b', 1)).toEqual({ text: '😀b', removed: 1 })
    expect(dropUtf8Head('é€', 3)).toEqual({ text: '', removed: 5 })
    expect(dropUtf8Head('abc', 10)).toEqual({ text: '', removed: 3 })
  })

  it('always returns a well-formed suffix within the budget', () => {
    const text = fc.string({ unit: fc.constantFrom('a', 'é', '€', '😀', '𝄞'), maxLength: 40 })
    fc.assert(
      fc.property(text, fc.nat(200), (value, budget) => {
        const kept = keepUtf8Tail(value, budget)
        expect(value.endsWith(kept)).toBe(true)
        expect(utf8Length(kept)).toBeLessThanOrEqual(budget)
        expect(utf8Length(kept)).toBeGreaterThan(Math.min(budget, utf8Length(value)) - 4)
        const head = keepUtf8Head(value, budget)
        expect(value.startsWith(head)).toBe(true)
        expect(utf8Length(head)).toBeLessThanOrEqual(budget)
        expect(utf8Length(head)).toBeGreaterThan(Math.min(budget, utf8Length(value)) - 4)
        expect(head).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/)
        const cut = dropUtf8Head(value, budget)
        expect(value.endsWith(cut.text)).toBe(true)
        expect(utf8Length(cut.text)).toBe(utf8Length(value) - cut.removed)
        expect(utf8Length(cut.text)).toBeLessThanOrEqual(Math.max(0, utf8Length(value) - budget))
        expect(cut.text).not.toMatch(/(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/)
        expect(kept).not.toMatch(/(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/)
      }),
    )
  })
})
