import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { encodeControl, FrameChannel, type FrameChannelHandlers, FrameDecoder, type Frame } from '../src/index'
import { encodeInput, MAX_OUTPUT_PER_FRAME } from '../src/internal'

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
  return { toChannel, channel, seen, controls, flush, sent }
}

describe('FrameChannel: hello first, versions, and bad frames', () => {
  it('sends its hello at once and accepts a peer hello of version 2', async () => {
    const { toChannel, seen, controls, flush } = harness()
    toChannel.write(encodeControl({ type: 'hello', version: 2, role: 'client', features: ['binary-output', 'credit'] } as never))
    toChannel.write(encodeControl({ type: 'cancel', id: 3 } as never))
    await flush()
    expect(controls()[0]).toMatchObject({
      type: 'hello',
      version: 2,
      role: 'session-host',
      features: ['binary-output', 'credit', 'durable', 'ping', 'input-frames', 'input-offsets'],
    })
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

describe('FrameChannel: output gathered per event-loop turn', () => {
  /** A channel whose peer already said hello; `frames` are what it wrote since. */
  async function ready() {
    const h = harness()
    h.toChannel.write(encodeControl({ type: 'hello', version: 2, role: 'client', features: ['binary-output', 'credit'] } as never))
    await h.flush()
    return h
  }

  it('chunks of one terminal in one turn leave as one frame, and a control message behind them stays behind them', async () => {
    const { channel, sent, flush } = await ready()
    const before = sent.length
    channel.sendOutput(1, 0, Buffer.from('ab'))
    channel.sendOutput(1, 2, Buffer.from('cd'))
    channel.sendOutput(2, 0, Buffer.from('x'))
    channel.sendOutput(1, 4, Buffer.from('ef'))
    channel.send({ type: 'exit', terminal: 1, exit: { exitCode: 0, signal: null }, offset: 6 } as never)
    expect(sent.length).toBe(before)
    await flush()
    const frames = sent
      .slice(before)
      .map((frame) =>
        frame.kind === 'output' ? `${frame.terminal}@${frame.offset}:${frame.bytes}` : frame.kind === 'control' ? frame.message.type : frame.kind,
      )
    expect(frames).toEqual(['1@0:abcd', '2@0:x', '1@4:ef', 'exit'])
  })

  it('a control message with nothing gathered goes out at once', async () => {
    const { channel, sent } = await ready()
    const before = sent.length
    channel.send({ type: 'ping', nonce: 7 } as never)
    await new Promise((resolve) => process.nextTick(resolve))
    expect(sent.slice(before).map((frame) => (frame.kind === 'control' ? frame.message.type : frame.kind))).toEqual(['ping'])
  })

  it('output gathered past the frame bound is split at MAX_OUTPUT_PER_FRAME with the right offsets, nothing lost', async () => {
    const { channel, sent, flush } = await ready()
    const before = sent.length
    const piece = Buffer.alloc(700 * 1024, 0x61)
    channel.sendOutput(3, 10, piece)
    channel.sendOutput(3, 10 + piece.length, Buffer.alloc(700 * 1024, 0x62))
    await flush()
    const frames = sent.slice(before).flatMap((frame) => (frame.kind === 'output' ? [frame] : []))
    expect(frames.map((frame) => frame.offset)).toEqual([10, 10 + MAX_OUTPUT_PER_FRAME])
    expect(frames[0]!.bytes.length).toBe(MAX_OUTPUT_PER_FRAME)
    const joined = Buffer.concat(frames.map((frame) => frame.bytes))
    expect(joined.equals(Buffer.concat([piece, Buffer.alloc(700 * 1024, 0x62)]))).toBe(true)
  })
})

describe('FrameChannel: input frames', () => {
  it('a side without an input handler refuses an input frame with UNEXPECTED_FRAME and goes on', async () => {
    const { toChannel, seen, flush, channel } = harness('client')
    toChannel.write(encodeControl({ type: 'hello', version: 2, role: 'session-host', features: ['binary-output', 'credit'] } as never))
    for (const frame of encodeInput(1, Buffer.from('ls\r'))) toChannel.write(frame)
    toChannel.write(encodeControl({ type: 'cancel', id: 5 } as never))
    await flush()
    expect(seen.protocolErrors).toEqual(['UNEXPECTED_FRAME'])
    expect(seen.control).toEqual([{ type: 'cancel', id: 5 }])
    expect(channel.closed).toBe(false)
  })
})
