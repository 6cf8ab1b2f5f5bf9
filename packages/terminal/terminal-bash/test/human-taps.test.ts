import { describe, expect, it } from 'vitest'
import { HumanTaps } from '../src/session/human-taps'

const bytes = (text: string) => new TextEncoder().encode(text)

describe('HumanTaps', () => {
  it('ends a tap whose listener throws, with the reason, and keeps delivering to the others', async () => {
    const taps = new HumanTaps({ replay: async () => '' })
    const ended: string[] = []
    const seen: string[] = []
    taps.open(
      () => {
        throw new Error('the socket is gone')
      },
      (reason) => ended.push(reason),
    )
    taps.open(
      (chunk) => seen.push(new TextDecoder().decode(chunk)),
      () => ended.push('the healthy tap ended'),
    )
    taps.deliver(bytes('a'))
    taps.deliver(bytes('b'))
    expect(ended).toEqual(['the watcher failed on output: the socket is gone'])
    expect(seen).toEqual(['a', 'b'])
    taps.end('the shell exited with status 0')
    expect(ended).toEqual(['the watcher failed on output: the socket is gone', 'the healthy tap ended'])
  })

  it('a failing tap whose onEnd throws too is still dropped, and the others still hear the end', () => {
    const taps = new HumanTaps({ replay: async () => '' })
    const ended: string[] = []
    taps.open(
      () => {
        throw new Error('output')
      },
      () => {
        throw new Error('end')
      },
    )
    taps.open(
      () => {},
      (reason) => ended.push(reason),
    )
    expect(() => taps.deliver(bytes('x'))).not.toThrow()
    taps.end('closed')
    expect(ended).toEqual(['closed'])
  })
})
