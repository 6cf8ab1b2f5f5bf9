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

  describe('before the first listener subscribed (the chunks are held)', () => {
    /** A delivery nobody listens to yet; every ack is checked against what the far side sent on the connection it goes over. */
    function held() {
      const acks: number[] = []
      let sent = 0
      const output = new OutputDelivery({
        acknowledge: (offset) => {
          // An ack beyond what was sent is refused by the session host (it counts what it sent).
          expect(offset).toBeLessThanOrEqual(sent)
          acks.push(offset)
        },
        ackEveryBytes: 1,
        report: (error) => {
          throw error
        },
      })
      const push = (offset: number, text: string) => {
        sent = offset + text.length
        return output.push(offset, Buffer.from(text))
      }
      const rebase = (from: number) => {
        sent = from
        return output.rebase(from)
      }
      const listen = () => {
        const got: string[] = []
        output.subscribe((chunk) => got.push(chunk.toString()))
        return got
      }
      return { push, rebase, listen, acks }
    }

    it('a replay of the held bytes is held once, and the acks count each byte once', () => {
      const { push, rebase, listen, acks } = held()
      push(0, 'abc')
      expect(acks).toEqual([])
      expect(rebase(0)).toBe(0)
      push(0, 'abc')
      push(3, 'de')
      const got = listen()
      expect(got.join('')).toBe('abcde')
      expect(acks.at(-1)).toBe(5)
      push(5, 'f')
      expect(got.join('')).toBe('abcdef')
      expect(acks.at(-1)).toBe(6)
    })

    it('a replay that starts inside the held bytes keeps the ones before it and holds the rest once', () => {
      const { push, rebase, listen, acks } = held()
      push(0, 'abc')
      expect(rebase(2)).toBe(0)
      push(2, 'cde')
      expect(listen().join('')).toBe('abcde')
      expect(acks.at(-1)).toBe(5)
    })

    it('a replay that starts past the held bytes (the ring dropped some) keeps them all and counts the gap', () => {
      const { push, rebase, listen, acks } = held()
      push(0, 'abc')
      expect(rebase(5)).toBe(2)
      push(5, 'fg')
      expect(listen().join('')).toBe('abcfg')
      expect(acks.at(-1)).toBe(7)
    })
  })
})
