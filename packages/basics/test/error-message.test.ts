import { describe, expect, it } from 'vitest'
import { errorMessage } from '../src'

describe('errorMessage', () => {
  it('is an Error message, or any other thrown value as a string', () => {
    expect(errorMessage(new TypeError('bad input'))).toBe('bad input')
    expect(errorMessage('plain text')).toBe('plain text')
    expect(errorMessage(42)).toBe('42')
    expect(errorMessage(undefined)).toBe('undefined')
  })
})
