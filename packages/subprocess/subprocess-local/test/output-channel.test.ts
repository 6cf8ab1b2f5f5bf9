import { describe, expect, it } from 'vitest'
import { OutputChannel } from '../src/output'

function channel() {
  const reported: unknown[] = []
  const output = new OutputChannel({ backlogBytes: 1024, pause: () => {}, resume: () => {}, report: (error) => reported.push(error) })
  return { output, reported }
}

describe('the output channel', () => {
  it('delivers each chunk to the listeners subscribed when it arrived, in order, once each', () => {
    const { output } = channel()
    const seen: string[] = []
    const first = (chunk: Buffer) => seen.push(`first ${chunk}`)
    let stopSecond = () => {}
    // The first listener unsubscribes the second mid-delivery: the chunk being delivered still reaches it.
    const second = (chunk: Buffer) => seen.push(`second ${chunk}`)
    output.subscribe((chunk) => {
      first(chunk)
      stopSecond()
    })
    stopSecond = output.subscribe(second)
    // Subscribing the same function twice delivers to it once; either unsubscribe removes it.
    const again = output.subscribe(second)
    output.push(Buffer.from('a'))
    output.push(Buffer.from('b'))
    again()
    expect(seen).toEqual(['first a', 'second a', 'first b'])
  })

  it('hands the backlog to the first subscriber only, and a throwing listener does not stop the others', () => {
    const { output, reported } = channel()
    output.push(Buffer.from('early'))
    const seen: string[] = []
    output.subscribe(() => {
      throw new Error('listener bug')
    })
    output.subscribe((chunk) => seen.push(String(chunk)))
    output.push(Buffer.from('late'))
    expect(seen).toEqual(['late'])
    expect(reported).toHaveLength(2)
  })
})

describe('OutputChannel hold/release (a reader downstream fell behind)', () => {
  it('pauses once for both reasons and resumes only when neither holds', () => {
    const calls: string[] = []
    const output = new OutputChannel({ backlogBytes: 4, pause: () => calls.push('pause'), resume: () => calls.push('resume'), report: () => {} })
    output.hold()
    output.hold()
    output.push(Buffer.from('12345'))
    expect(calls).toEqual(['pause'])
    const seen: string[] = []
    output.subscribe((chunk) => seen.push(chunk.toString()))
    // The backlog went to the first subscriber, but the downstream hold still stands.
    expect(seen).toEqual(['12345'])
    expect(calls).toEqual(['pause'])
    output.release()
    output.release()
    expect(calls).toEqual(['pause', 'resume'])
  })

  it('a full backlog released while held stays paused until the hold ends', () => {
    const calls: string[] = []
    const output = new OutputChannel({ backlogBytes: 2, pause: () => calls.push('pause'), resume: () => calls.push('resume'), report: () => {} })
    output.push(Buffer.from('abc'))
    output.hold()
    output.subscribe(() => {})
    expect(calls).toEqual(['pause'])
    output.release()
    expect(calls).toEqual(['pause', 'resume'])
  })
})
