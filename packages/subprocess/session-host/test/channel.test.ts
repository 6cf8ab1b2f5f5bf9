import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { encodeControl, FrameChannel, type FrameChannelHandlers, FrameDecoder, type Frame } from '../src/index'

/** A channel whose peer is driven by hand: what the channel wrote is decoded into `sent`. */
function harness(role: 'client' | 'session-host' = 'session-host') {
  const toChannel = new PassThrough()
  const fromChannel = new PassThrough()
  const sent: Frame[] = []
  const decoder = new FrameDecoder(
    (frame) => sent.push(frame),
    () => {},
  )
  fromChannel.on('data', (chunk: Buffer) => decoder.push(chunk))
  const seen = { hello: 0, control: [] as unknown[], protocolErrors: [] as string[], closed: 0 }
  const handlers: FrameChannelHandlers = {
    hello: () => void (seen.hello += 1),
    control: (message) => void seen.control.push(message),
    output: () => {},
    protocolError: (error) => void seen.protocolErrors.push(error.code),
    peerError: () => {},
    closed: () => void (seen.closed += 1),
  }
  const channel = new FrameChannel(toChannel, fromChannel, role, {}, handlers)
  const controls = () => sent.flatMap((frame) => (frame.kind === 'control' ? [frame.message] : []))
  const flush = () => new Promise((resolve) => setImmediate(resolve))
  return { toChannel, channel, seen, controls, flush }
}

describe('FrameChannel: hello first, versions, and bad frames', () => {
  it('sends its hello at once and accepts a peer hello of version 2', async () => {
    const { toChannel, seen, controls, flush } = harness()
    toChannel.write(encodeControl({ type: 'hello', version: 2, role: 'client', features: ['binary-output', 'credit'] } as never))
    toChannel.write(encodeControl({ type: 'cancel', id: 3 } as never))
    await flush()
    expect(controls()[0]).toMatchObject({ type: 'hello', version: 2, role: 'session-host', features: ['binary-output', 'credit', 'durable', 'ping'] })
    expect(seen.hello).toBe(1)
    expect(seen.control).toEqual([{ type: 'cancel', id: 3 }])
  })

  it('a version 1 peer gets PROTOCOL_VERSION naming both versions, then the hang-up', async () => {
    const { toChannel, seen, controls, flush, channel } = harness()
    toChannel.write(encodeControl({ type: 'hello', version: 1, role: 'client', features: ['binary-output', 'credit'] } as never))
    await flush()
    expect(controls()[1]).toEqual({
      type: 'error',
      code: 'PROTOCOL_VERSION',
      message: 'this session host speaks protocol version 2, the client sent version 1',
    })
    expect(channel.closed).toBe(true)
    expect(seen.closed).toBe(1)
  })

  it('anything before the hello is HELLO_REQUIRED (fatal)', async () => {
    const { toChannel, controls, flush, channel } = harness()
    toChannel.write(encodeControl({ type: 'request', id: 1, method: 'spawn' } as never))
    await flush()
    expect(controls()[1]).toMatchObject({ type: 'error', code: 'HELLO_REQUIRED' })
    expect(channel.closed).toBe(true)
  })

  it('a second hello is UNEXPECTED_FRAME and the connection stays', async () => {
    const { toChannel, controls, flush, channel, seen } = harness()
    const hello = encodeControl({ type: 'hello', version: 2, role: 'client', features: ['binary-output', 'credit'] } as never)
    toChannel.write(hello)
    toChannel.write(hello)
    await flush()
    expect(controls()[1]).toMatchObject({ type: 'error', code: 'UNEXPECTED_FRAME' })
    expect(seen.protocolErrors).toEqual(['UNEXPECTED_FRAME'])
    expect(channel.closed).toBe(false)
  })
})
