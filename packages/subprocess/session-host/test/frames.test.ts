import { describe, expect, it } from 'vitest'
import { encodeControl, encodeOutput, type Frame, FrameDecoder, MAX_FRAME_BYTES, type ProtocolError } from '../src/index'
import { MAX_OUTPUT_PER_FRAME } from '../src/internal'

/** A decoder that records what it decoded and refused, as plain values. */
function recorder() {
  const frames: Frame[] = []
  const errors: { code: string; fatal: boolean }[] = []
  const decoder = new FrameDecoder(
    (frame) => frames.push(frame),
    (error: ProtocolError) => errors.push({ code: error.code, fatal: error.fatal }),
  )
  return { decoder, frames, errors }
}

/** A raw frame with the given type byte and body. */
function rawFrame(type: number, body: Buffer): Buffer {
  const head = Buffer.alloc(5)
  head.writeUInt32BE(body.length + 1, 0)
  head[4] = type
  return Buffer.concat([head, body])
}

describe('frame codec', () => {
  it('decodes frames split at every byte and frames merged into one chunk', () => {
    const stream = Buffer.concat([
      encodeControl({ type: 'ack', terminal: 1, offset: 5 } as never),
      ...encodeOutput(3, 1234, Buffer.from('héllo')),
      encodeControl({ type: 'cancel', id: 2 } as never),
    ])
    const split = recorder()
    for (const byte of stream) split.decoder.push(Buffer.from([byte]))
    const merged = recorder()
    merged.decoder.push(stream)
    for (const { frames, errors } of [split, merged]) {
      expect(errors).toEqual([])
      expect(frames).toEqual([
        { kind: 'control', message: { type: 'ack', terminal: 1, offset: 5 } },
        { kind: 'output', terminal: 3, offset: 1234, bytes: Buffer.from('héllo') },
        { kind: 'control', message: { type: 'cancel', id: 2 } },
      ])
    }
  })

  it('carries output as binary (12 bytes of header, no base64) and splits a chunk larger than a frame', () => {
    const [small] = encodeOutput(1, 0, Buffer.alloc(100, 0xff))
    expect(small!.length).toBe(4 + 1 + 12 + 100)
    const big = Buffer.alloc(MAX_OUTPUT_PER_FRAME * 2 + 7, 0x61)
    const frames = encodeOutput(9, 2 ** 40, big)
    expect(frames.map((frame) => frame.readUInt32BE(0) <= MAX_FRAME_BYTES)).toEqual([true, true, true])
    const { decoder, frames: decoded } = recorder()
    for (const frame of frames) decoder.push(frame)
    expect(decoded.map((frame) => (frame.kind === 'output' ? [frame.offset, frame.bytes.length] : []))).toEqual([
      [2 ** 40, MAX_OUTPUT_PER_FRAME],
      [2 ** 40 + MAX_OUTPUT_PER_FRAME, MAX_OUTPUT_PER_FRAME],
      [2 ** 40 + 2 * MAX_OUTPUT_PER_FRAME, 7],
    ])
  })

  it('an oversized length is FRAME_TOO_LARGE, fatal, and nothing after it is read', () => {
    const { decoder, frames, errors } = recorder()
    const head = Buffer.alloc(4)
    head.writeUInt32BE(MAX_FRAME_BYTES + 1, 0)
    decoder.push(head)
    decoder.push(encodeControl({ type: 'cancel', id: 1 } as never))
    expect(errors).toEqual([{ code: 'FRAME_TOO_LARGE', fatal: true }])
    expect(frames).toEqual([])
  })

  it('malformed JSON, a non-object and an unknown type byte are refused without losing the next frame', () => {
    const { decoder, frames, errors } = recorder()
    decoder.push(rawFrame(0x01, Buffer.from('{not json')))
    decoder.push(rawFrame(0x01, Buffer.from('[1,2]')))
    decoder.push(rawFrame(0x01, Buffer.from('{"type":7}')))
    decoder.push(rawFrame(0x7f, Buffer.from('x')))
    decoder.push(rawFrame(0x02, Buffer.from('short')))
    decoder.push(encodeControl({ type: 'cancel', id: 4 } as never))
    expect(errors).toEqual([
      { code: 'MALFORMED_FRAME', fatal: false },
      { code: 'MALFORMED_FRAME', fatal: false },
      { code: 'MALFORMED_FRAME', fatal: false },
      { code: 'UNKNOWN_FRAME', fatal: false },
      { code: 'MALFORMED_FRAME', fatal: false },
    ])
    expect(frames).toEqual([{ kind: 'control', message: { type: 'cancel', id: 4 } }])
  })

  it('a zero length is fatal (no type byte to skip by)', () => {
    const { decoder, errors } = recorder()
    decoder.push(Buffer.alloc(4))
    expect(errors).toEqual([{ code: 'MALFORMED_FRAME', fatal: true }])
  })

  it('refuses to encode a control message beyond the bound', () => {
    expect(() => encodeControl({ type: 'x', pad: 'a'.repeat(MAX_FRAME_BYTES) } as never)).toThrow(expect.objectContaining({ code: 'FRAME_TOO_LARGE' }))
  })
})
