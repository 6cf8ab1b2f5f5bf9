import { describe, expect, it } from 'vitest'
import { errorMessage } from '../src'

describe('errorMessage', () => {
  it('is an Error message, or any other thrown value as a string', () => {
    expect(errorMessage(new TypeError('bad input'))).toBe('bad input')
    expect(errorMessage('plain text')).toBe('plain text')
    expect(errorMessage(42)).toBe('42')
    expect(errorMessage(undefined)).toBe('undefined')
  })

  it('names an Error without a message, and shows a thrown object as JSON where it can', () => {
    expect(errorMessage(new RangeError(''))).toBe('RangeError')
    expect(errorMessage({ code: 'E_FAIL', detail: 2 })).toBe('{"code":"E_FAIL","detail":2}')
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    expect(errorMessage(cyclic)).toBe('[object Object]')
  })
})
