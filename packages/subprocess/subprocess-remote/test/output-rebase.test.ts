import { describe, expect, it } from 'vitest'
import { OutputDelivery } from '../src/output-delivery'

/** A delivery with one listener, recording what it got and what was acknowledged. */
function delivery() {
  const got: string[] = []
  const acks: number[] = []
  const output = new OutputDelivery({
    acknowledge: (offset) => acks.push(offset),
    ackEveryBytes: 1,
    report: (error) => {
      throw error
    },
  })
  output.subscribe((chunk) => got.push(chunk.toString()))
  return { output, got, acks }
}

describe('OutputDelivery after a re-adoption (rebase)', () => {
  it('drops the replayed bytes this side had, across a chunk that straddles the boundary, and acknowledges them', () => {
    const { output, got, acks } = delivery()
    expect(output.push(0, Buffer.from('abc'))).toBe(true)
    expect(output.push(3, Buffer.from('de'))).toBe(true)
    expect(output.rebase(1)).toBe(0)
    expect(output.push(1, Buffer.from('bc'))).toBe(true)
    expect(output.push(3, Buffer.from('defg'))).toBe(true)
    expect(got.join('')).toBe('abcdefg')
    expect(acks.at(-1)).toBe(7)
    // A replay that does not continue the new stream is still a fault.
    expect(output.push(9, Buffer.from('x'))).toBe(false)
  })

  it('answers the bytes the replay no longer held and continues from there', () => {
    const { output, got } = delivery()
    output.push(0, Buffer.from('ab'))
    expect(output.rebase(5)).toBe(3)
    output.push(5, Buffer.from('fg'))
    expect(got.join('')).toBe('abfg')
  })
})
