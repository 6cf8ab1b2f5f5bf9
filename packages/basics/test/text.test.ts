import { describe, expect, it } from 'vitest'
import { oneLine, utf8ByteLength } from '../src/index'

describe('oneLine', () => {
  it('turns runs of control characters and spaces into one space and trims the ends', () => {
    expect(oneLine('  make:\t***\r\n[all]\u001b[31m  Error 2\u0085 ')).toBe('make: *** [all] [31m Error 2')
  })

  it('keeps at most maxBytes UTF-8 bytes, an ellipsis marking the cut on a code-point boundary', () => {
    const cut = oneLine('é'.repeat(300), 200)
    expect(cut.endsWith('…')).toBe(true)
    expect(utf8ByteLength(cut)).toBeLessThanOrEqual(200)
    expect(oneLine('short', 200)).toBe('short')
  })
})
