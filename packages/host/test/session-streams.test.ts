import { EventEmitter } from 'node:events'
import type { ServerResponse } from 'node:http'
import type { TerminalHumanObserver, TerminalHumanView } from 'dsh-terminal'
import { describe, expect, it } from 'vitest'
import type { HumanGateway } from '../src/human/gateway'
import { SessionStreams } from '../src/web/session-streams'

/** A response that records what was written and how it ended. */
class FakeResponse extends EventEmitter {
  readonly events: string[] = []
  writableEnded = false
  destroyed = false
  writableLength = 0
  writeHead(): this {
    return this
  }
  write(chunk: string): boolean {
    this.events.push(chunk)
    return true
  }
  end(): this {
    if (!this.writableEnded) {
      this.writableEnded = true
      this.emit('close')
    }
    return this
  }
  destroy(): this {
    this.destroyed = true
    this.emit('close')
    return this
  }
}

/** A gateway whose views record being closed and whose observers the test drives. */
function fakeGateway() {
  const observers: TerminalHumanObserver[] = []
  const closed: string[] = []
  const gateway = {
    async attach(sessionId: string, observer: TerminalHumanObserver): Promise<TerminalHumanView> {
      observers.push(observer)
      return {
        sessionId,
        screen: 'S',
        size: { rows: 2, cols: 3 },
        writing: false,
        takeWrite() {},
        releaseWrite() {},
        async write() {},
        close: () => closed.push(sessionId),
      } as unknown as TerminalHumanView
    },
  } as unknown as HumanGateway
  return { gateway, observers, closed }
}

const payload = (event: string) => event.split('\ndata: ')[1]?.trimEnd()

describe('SessionStreams', () => {
  it('sends the screen first, then output (base64 of exactly the chunk, a subarray too), then one end', async () => {
    const { gateway, observers } = fakeGateway()
    const streams = new SessionStreams(gateway, () => {})
    const res = new FakeResponse()
    await streams.open('s1', res as unknown as ServerResponse)
    const backing = new TextEncoder().encode('xxhelloyy')
    observers[0]?.onOutput(backing.subarray(2, 7))
    observers[0]?.onEnd('the shell exited')
    expect(res.events.map((event) => event.split('\n')[0])).toEqual(['event: screen', 'event: output', 'event: end'])
    expect(JSON.parse(payload(res.events[0] as string) as string)).toMatchObject({ sessionId: 's1', screen: 'S', rows: 2, cols: 3 })
    expect(Buffer.from(payload(res.events[1] as string) as string, 'base64').toString()).toBe('hello')
    expect(res.writableEnded).toBe(true)
  })

  it('closeAll ends every open response and closes every view; the views are gone afterwards', async () => {
    const { gateway, closed } = fakeGateway()
    const streams = new SessionStreams(gateway, () => {})
    const first = new FakeResponse()
    const second = new FakeResponse()
    await streams.open('s1', first as unknown as ServerResponse)
    await streams.open('s2', second as unknown as ServerResponse)
    const viewId = JSON.parse(payload(first.events[0] as string) as string).viewId
    expect(streams.view('s1', viewId).sessionId).toBe('s1')
    streams.closeAll()
    expect([first.writableEnded, second.writableEnded]).toEqual([true, true])
    expect(new Set(closed)).toEqual(new Set(['s1', 's2']))
    expect(() => streams.view('s1', viewId)).toThrow(/no open view/)
  })
})
