import type { Readable, Writable } from 'node:stream'
import { ProtocolError } from './errors'
import { encodeControl, encodeOutput, type Frame, FrameDecoder, PROTOCOL_VERSION } from './frames'
import { type ControlMessage, FEATURES, type HelloMessage, type PeerRole } from './messages'

/** What a {@link FrameChannel} reports to its owner after the hellos were exchanged. */
export interface FrameChannelHandlers {
  /** The peer's hello arrived and was accepted. */
  readonly hello: (hello: HelloMessage) => void
  /** A control frame other than the hello. */
  readonly control: (message: { readonly type: string; readonly [field: string]: unknown }) => void
  /** An output frame. */
  readonly output: (terminal: number, offset: number, bytes: Buffer) => void
  /** A bad frame from the peer (already answered with an error frame; closed when fatal). */
  readonly protocolError: (error: ProtocolError) => void
  /** The peer reported an error frame. */
  readonly peerError: (code: string, message: string) => void
  /** The stream ended or broke; called once. */
  readonly closed: () => void
}

/**
 * One end of a protocol connection over a readable and a writable stream (a socket twice, or
 * stdin and stdout): sends its hello at once, checks the peer's, frames and unframes messages, and
 * answers bad frames with error frames instead of throwing.
 */
export class FrameChannel {
  readonly #input: Readable
  readonly #outputStream: Writable
  readonly #handlers: FrameChannelHandlers
  readonly #decoder: FrameDecoder
  readonly #role: PeerRole
  #peer: HelloMessage | undefined
  #closed = false

  constructor(
    input: Readable,
    output: Writable,
    role: PeerRole,
    hello: Omit<HelloMessage, 'type' | 'version' | 'role' | 'features'>,
    handlers: FrameChannelHandlers,
  ) {
    this.#input = input
    this.#outputStream = output
    this.#handlers = handlers
    this.#role = role
    this.#decoder = new FrameDecoder(
      (frame) => this.#frame(frame),
      (error) => this.#refuse(error),
    )
    input.on('data', (chunk: Buffer) => this.#decoder.push(chunk))
    input.on('end', () => this.close())
    input.on('error', () => this.close())
    input.on('close', () => this.close())
    output.on('error', () => this.close())
    this.send({ type: 'hello', version: PROTOCOL_VERSION, role, features: FEATURES, ...hello })
  }

  /** The peer's hello, once it arrived. */
  get peer(): HelloMessage | undefined {
    return this.#peer
  }

  /** True once the connection ended. */
  get closed(): boolean {
    return this.#closed
  }

  /** Send one control message (dropped once closed). */
  send(message: ControlMessage): void {
    if (!this.#closed) this.#outputStream.write(encodeControl(message))
  }

  /** Send a terminal's output from `offset` (as several frames when large). */
  sendOutput(terminal: number, offset: number, bytes: Buffer): void {
    if (this.#closed) return
    for (const frame of encodeOutput(terminal, offset, bytes)) this.#outputStream.write(frame)
  }

  /** Bytes written but not yet flushed to the peer (memory the stream holds for us). */
  get bufferedBytes(): number {
    return this.#outputStream.writableLength
  }

  /** Hang up (idempotent); `closed` is reported once. */
  close(): void {
    if (this.#closed) return
    this.#closed = true
    this.#input.pause()
    if (!this.#outputStream.writableEnded) this.#outputStream.end()
    this.#handlers.closed()
  }

  #frame(frame: Frame): void {
    if (this.#closed) return
    if (!this.#peer) return this.#hello(frame)
    if (frame.kind === 'output') return this.#handlers.output(frame.terminal, frame.offset, frame.bytes)
    const { message } = frame
    if (message.type === 'hello') return this.#refuse(new ProtocolError('UNEXPECTED_FRAME', 'a second hello on one connection'))
    if (message.type === 'error') return this.#handlers.peerError(String(message.code), String(message.message))
    this.#handlers.control(message)
  }

  #hello(frame: Frame): void {
    const message = frame.kind === 'control' ? frame.message : undefined
    if (message?.type === 'error') {
      this.#handlers.peerError(String(message.code), String(message.message))
      return this.close()
    }
    if (message?.type !== 'hello')
      return this.#refuse(new ProtocolError('HELLO_REQUIRED', `expected a hello first, got ${message ? `a ${message.type} message` : 'an output frame'}`))
    if (message.version !== PROTOCOL_VERSION) {
      const me = this.#role === 'client' ? 'this client' : 'this session host'
      const them = this.#role === 'client' ? 'the session host' : 'the client'
      return this.#refuse(
        new ProtocolError('PROTOCOL_VERSION', `${me} speaks protocol version ${PROTOCOL_VERSION}, ${them} sent version ${JSON.stringify(message.version)}`),
      )
    }
    const features = Array.isArray(message.features) ? message.features : []
    const missing = FEATURES.filter((feature) => !features.includes(feature))
    if (missing.length > 0) return this.#refuse(new ProtocolError('PROTOCOL_VERSION', `the peer lacks required features: ${missing.join(', ')}`, true))
    this.#peer = message as unknown as HelloMessage
    this.#handlers.hello(this.#peer)
  }

  /** Answer a bad frame with an error frame; hang up when it is fatal. */
  #refuse(error: ProtocolError): void {
    this.send({ type: 'error', code: error.code, message: error.message })
    this.#handlers.protocolError(error)
    if (error.fatal) this.close()
  }
}
