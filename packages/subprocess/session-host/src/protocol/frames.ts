import { ProtocolError } from './errors'

/** The protocol version this package speaks (see PROTOCOL.md). */
export const PROTOCOL_VERSION = 2

/** Largest frame (type byte plus body) either side accepts: beyond it the connection closes. */
export const MAX_FRAME_BYTES = 1024 * 1024

/** Type byte of a JSON control frame. */
export const CONTROL_FRAME = 0x01

/** Type byte of a binary output frame: terminal (u32), offset (u64), bytes. */
export const OUTPUT_FRAME = 0x02

/** Type byte of a binary input frame (feature `input-frames`, client → session host): terminal (u32), bytes. */
export const INPUT_FRAME = 0x03

/** Bytes of an output frame's header after the type byte. */
const OUTPUT_HEADER_BYTES = 12

/** Bytes of an input frame's header after the type byte. */
const INPUT_HEADER_BYTES = 4

/** Most output bytes one frame carries: a larger chunk goes out as several frames. */
export const MAX_OUTPUT_PER_FRAME = MAX_FRAME_BYTES - 1 - OUTPUT_HEADER_BYTES

/** Most input bytes one frame carries: a larger write goes out as several frames. */
export const MAX_INPUT_PER_FRAME = MAX_FRAME_BYTES - 1 - INPUT_HEADER_BYTES

/** A decoded frame: a control message (parsed JSON object) or a piece of a terminal's output. */
export type Frame =
  | { readonly kind: 'control'; readonly message: { readonly type: string; readonly [field: string]: unknown } }
  | { readonly kind: 'output'; readonly terminal: number; readonly offset: number; readonly bytes: Buffer }
  | { readonly kind: 'input'; readonly terminal: number; readonly bytes: Buffer }

/** One control frame holding `message` as JSON. */
export function encodeControl(message: { readonly type: string }): Buffer {
  const body = Buffer.from(JSON.stringify(message), 'utf8')
  if (body.length + 1 > MAX_FRAME_BYTES) throw new ProtocolError('FRAME_TOO_LARGE', `a ${message.type} message of ${body.length} bytes exceeds the frame bound`)
  const frame = Buffer.allocUnsafe(5 + body.length)
  frame.writeUInt32BE(body.length + 1, 0)
  frame[4] = CONTROL_FRAME
  body.copy(frame, 5)
  return frame
}

/** The length, type and header of an output frame whose `length` bytes (at most {@link MAX_OUTPUT_PER_FRAME}) follow it. */
export function outputHeader(terminal: number, offset: number, length: number): Buffer {
  const header = Buffer.allocUnsafe(5 + OUTPUT_HEADER_BYTES)
  header.writeUInt32BE(1 + OUTPUT_HEADER_BYTES + length, 0)
  header[4] = OUTPUT_FRAME
  header.writeUInt32BE(terminal, 5)
  // The u64 offset as two u32 halves: no BigInt per frame (offsets stay below 2^53).
  header.writeUInt32BE(Math.floor(offset / 0x1_0000_0000), 9)
  header.writeUInt32BE(offset % 0x1_0000_0000, 13)
  return header
}

/** The output frames carrying `bytes` of `terminal` from absolute `offset` on (several when it is large). */
export function encodeOutput(terminal: number, offset: number, bytes: Buffer): Buffer[] {
  const frames: Buffer[] = []
  for (let start = 0; start < bytes.length || frames.length === 0; start += MAX_OUTPUT_PER_FRAME) {
    const piece = bytes.subarray(start, start + MAX_OUTPUT_PER_FRAME)
    frames.push(Buffer.concat([outputHeader(terminal, offset + start, piece.length), piece]))
  }
  return frames
}

/** The input frames carrying `bytes` to `terminal` (several when it is large; none for no bytes). */
export function encodeInput(terminal: number, bytes: Buffer): Buffer[] {
  const frames: Buffer[] = []
  for (let start = 0; start < bytes.length; start += MAX_INPUT_PER_FRAME) {
    const piece = bytes.subarray(start, start + MAX_INPUT_PER_FRAME)
    const frame = Buffer.allocUnsafe(5 + INPUT_HEADER_BYTES + piece.length)
    frame.writeUInt32BE(1 + INPUT_HEADER_BYTES + piece.length, 0)
    frame[4] = INPUT_FRAME
    frame.writeUInt32BE(terminal, 5)
    piece.copy(frame, 5 + INPUT_HEADER_BYTES)
    frames.push(frame)
  }
  return frames
}

/**
 * Splits a byte stream into frames, whatever the chunking (a frame split over reads, several in
 * one). Calls `onFrame` per frame and `onError` per bad frame; after a fatal error it stops reading.
 */
export class FrameDecoder {
  readonly #onFrame: (frame: Frame) => void
  readonly #onError: (error: ProtocolError) => void
  #pending: Buffer[] = []
  #pendingBytes = 0
  #stopped = false

  constructor(onFrame: (frame: Frame) => void, onError: (error: ProtocolError) => void) {
    this.#onFrame = onFrame
    this.#onError = onError
  }

  /** Feed the next bytes of the stream. */
  push(chunk: Buffer): void {
    if (this.#stopped) return
    this.#pending.push(chunk)
    this.#pendingBytes += chunk.length
    while (!this.#stopped && this.#pendingBytes >= 4) {
      const head = this.#take(4, false)
      const length = head.readUInt32BE(0)
      if (length > MAX_FRAME_BYTES)
        return this.#fatal(new ProtocolError('FRAME_TOO_LARGE', `a frame of ${length} bytes exceeds the bound of ${MAX_FRAME_BYTES}`))
      if (length === 0) return this.#fatal(new ProtocolError('MALFORMED_FRAME', 'a frame of length 0 has no type byte', true))
      if (this.#pendingBytes < 4 + length) return
      this.#take(4, true)
      this.#decode(this.#take(length, true))
    }
  }

  #fatal(error: ProtocolError): void {
    this.#stopped = true
    this.#pending = []
    this.#pendingBytes = 0
    this.#onError(error)
  }

  /** The first `count` pending bytes as one buffer; consumed when `consume`. */
  #take(count: number, consume: boolean): Buffer {
    const first = this.#pending[0]!
    let joined: Buffer
    if (first.length >= count) joined = first.subarray(0, count)
    else {
      joined = Buffer.concat(this.#pending, this.#pendingBytes)
      this.#pending = [joined]
      joined = joined.subarray(0, count)
    }
    if (consume) {
      const rest = this.#pending[0]!.subarray(count)
      this.#pending.shift()
      if (rest.length > 0) this.#pending.unshift(rest)
      this.#pendingBytes -= count
    }
    return joined
  }

  #decode(frame: Buffer): void {
    const type = frame[0]
    if (type === OUTPUT_FRAME) {
      if (frame.length < 1 + OUTPUT_HEADER_BYTES)
        return this.#onError(new ProtocolError('MALFORMED_FRAME', `an output frame of ${frame.length} bytes is shorter than its header`))
      const high = frame.readUInt32BE(5)
      // 2^53 is 2^21 times 2^32: a high half from 2^21 on cannot be a safe integer.
      if (high >= 0x20_0000) return this.#onError(new ProtocolError('MALFORMED_FRAME', 'an output offset is beyond 2^53'))
      const offset = high * 0x1_0000_0000 + frame.readUInt32BE(9)
      // Copied: the frame's memory is a slice of a read buffer that later frames share.
      this.#onFrame({ kind: 'output', terminal: frame.readUInt32BE(1), offset, bytes: Buffer.from(frame.subarray(13)) })
      return
    }
    if (type === INPUT_FRAME) {
      if (frame.length < 1 + INPUT_HEADER_BYTES)
        return this.#onError(new ProtocolError('MALFORMED_FRAME', `an input frame of ${frame.length} bytes is shorter than its header`))
      this.#onFrame({ kind: 'input', terminal: frame.readUInt32BE(1), bytes: frame.subarray(1 + INPUT_HEADER_BYTES) })
      return
    }
    if (type !== CONTROL_FRAME)
      return this.#onError(new ProtocolError('UNKNOWN_FRAME', `unknown frame type byte 0x${(type ?? 0).toString(16).padStart(2, '0')}`))
    let message: unknown
    try {
      message = JSON.parse(frame.subarray(1).toString('utf8'))
    } catch (error) {
      return this.#onError(new ProtocolError('MALFORMED_FRAME', `a control frame is not JSON: ${(error as Error).message}`))
    }
    if (typeof message !== 'object' || message === null || Array.isArray(message) || typeof (message as { type?: unknown }).type !== 'string') {
      return this.#onError(new ProtocolError('MALFORMED_FRAME', 'a control frame must be a JSON object with a string "type"'))
    }
    this.#onFrame({ kind: 'control', message: message as { type: string } })
  }
}
