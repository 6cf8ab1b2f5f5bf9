import type { Readable, Writable } from 'node:stream'
import { ProtocolError } from './errors'
import { describePeerValue, peerText, QUOTED_CHARACTERS } from './peer-value'
import { encodeControl, encodeInput, type Frame, FrameDecoder, MAX_OUTPUT_PER_FRAME, outputHeader, PROTOCOL_VERSION } from './frames'
import { type ControlMessage, FEATURES, type HelloMessage, OFFERED_FEATURES, type PeerRole } from './messages'

/** How long a peer has to send its hello; a connection still silent then is refused (`HELLO_REQUIRED`) and closed. */
export const HELLO_DEADLINE_MS = 5_000

/** Output of one terminal waiting for this turn's flush: contiguous pieces, sent as frames of up to {@link MAX_OUTPUT_PER_FRAME}. */
interface PendingOutput {
  readonly terminal: number
  readonly offset: number
  readonly pieces: Buffer[]
  bytes: number
}

/** What a {@link FrameChannel} reports to its owner after the hellos were exchanged. */
export interface FrameChannelHandlers {
  /** The peer's hello arrived and was accepted. */
  readonly hello: (hello: HelloMessage) => void
  /** A control frame other than the hello. */
  readonly control: (message: { readonly type: string; readonly [field: string]: unknown }) => void
  /** An output frame. */
  readonly output: (terminal: number, offset: number, bytes: Buffer) => void
  /** An input frame (feature `input-frames`); a side that takes none refuses them. */
  readonly input?: (terminal: number, bytes: Buffer) => void
  /** A bad frame from the peer (already answered with an error frame; closed when fatal). */
  readonly protocolError: (error: ProtocolError) => void
  /** The peer reported an error frame. */
  readonly peerError: (code: string, message: string) => void
  /** The session host could not write an input frame to `terminal` (an error frame naming it). */
  readonly inputFailed?: (terminal: number, code: string, message: string) => void
  /** The stream ended or broke; called once. */
  readonly closed: () => void
}

/**
 * One end of a protocol connection over a readable and a writable stream (a socket twice, or
 * stdin and stdout): sends its hello at once, checks the peer's, frames and unframes messages, and
 * answers bad frames with error frames instead of throwing. Output is gathered until the event loop's
 * check phase (every PTY read of this turn, in order with the control messages around it) and leaves
 * in one write, pieces of one terminal joined into one frame.
 */
export class FrameChannel {
  readonly #input: Readable
  readonly #outputStream: Writable
  readonly #handlers: FrameChannelHandlers
  readonly #decoder: FrameDecoder
  readonly #role: PeerRole
  #peer: HelloMessage | undefined
  #closed = false
  #helloDeadline: NodeJS.Timeout | undefined
  /** Frames and output waiting for this turn's flush, in order; empty when nothing waits. */
  #queue: (Buffer | PendingOutput)[] = []
  #queuedBytes = 0

  constructor(
    input: Readable,
    output: Writable,
    role: PeerRole,
    hello: Omit<HelloMessage, 'type' | 'version' | 'role' | 'features'>,
    handlers: FrameChannelHandlers,
    /** How long the peer has for its hello (a client reaching a session host through ssh waits longer). */
    helloDeadlineMs: number = HELLO_DEADLINE_MS,
  ) {
    this.#input = input
    this.#outputStream = output
    this.#handlers = handlers
    this.#role = role
    this.#decoder = new FrameDecoder(
      (frame) => this.#guarded(() => this.#frame(frame)),
      (error) => this.#guarded(() => this.#refuse(error)),
    )
    input.on('data', (chunk: Buffer) => this.#decoder.push(chunk))
    input.on('end', () => this.close())
    input.on('error', () => this.close())
    input.on('close', () => this.close())
    output.on('error', () => this.close())
    this.send({ type: 'hello', version: PROTOCOL_VERSION, role, features: OFFERED_FEATURES, ...hello })
    // A connection that says nothing must not hold a descriptor (and a session host's idle exit) forever.
    this.#helloDeadline = setTimeout(
      () => this.#refuse(new ProtocolError('HELLO_REQUIRED', `no hello within ${helloDeadlineMs} ms of connecting`)),
      helloDeadlineMs,
    )
    this.#helloDeadline.unref()
  }

  /** The peer's hello, once it arrived. */
  get peer(): HelloMessage | undefined {
    return this.#peer
  }

  /** True once the connection ended. */
  get closed(): boolean {
    return this.#closed
  }

  /**
   * Send one control message (dropped once closed). A message that cannot be framed (larger than a
   * frame) is a bug of this side: the connection closes rather than the process.
   */
  send(message: ControlMessage): void {
    if (this.sendOrRefuse(message) !== undefined) this.close()
  }

  /**
   * Send one control message, or answer why it cannot be framed and send nothing: a request too large
   * for a frame (a caller's spawn) is refused on its own, the connection and its terminals live on.
   */
  sendOrRefuse(message: ControlMessage): Error | undefined {
    if (this.#closed) return undefined
    let frame: Buffer
    try {
      frame = encodeControl(message)
    } catch (error) {
      return error as Error
    }
    this.#sendFrame(frame)
    return undefined
  }

  /** Send a terminal's output from `offset`: gathered with the rest of this turn's, sent in the check phase. */
  sendOutput(terminal: number, offset: number, bytes: Buffer): void {
    if (this.#closed) return
    const last = this.#queue[this.#queue.length - 1]
    if (last !== undefined && !Buffer.isBuffer(last) && last.terminal === terminal && last.offset + last.bytes === offset) {
      last.pieces.push(bytes)
      last.bytes += bytes.length
      this.#queuedBytes += bytes.length
      return
    }
    this.#enqueue({ terminal, offset, pieces: [bytes], bytes: bytes.length }, bytes.length)
  }

  /** Send bytes to write to a terminal as input frames (feature `input-frames`), in order with the requests. */
  sendInput(terminal: number, bytes: Buffer): void {
    if (this.#closed) return
    for (const frame of encodeInput(terminal, bytes)) this.#sendFrame(frame)
  }

  /** A whole frame: at once, or, behind output still gathering, in its turn (an exit follows the last output). */
  #sendFrame(frame: Buffer): void {
    if (this.#queue.length > 0) this.#enqueue(frame, frame.length)
    else this.#outputStream.write(frame)
  }

  /** Bytes written but not yet flushed to the peer (memory the stream holds for us), gathering ones included. */
  get bufferedBytes(): number {
    return this.#outputStream.writableLength + this.#queuedBytes
  }

  #enqueue(item: Buffer | PendingOutput, bytes: number): void {
    if (this.#queue.length === 0) setImmediate(() => this.#flush())
    this.#queue.push(item)
    this.#queuedBytes += bytes
  }

  /**
   * Everything gathered this turn as one buffer and one write: a single copy costs less than the
   * scatter list of a writev (measured on a `true` round trip), and output of one terminal goes in
   * frames of up to {@link MAX_OUTPUT_PER_FRAME}.
   */
  #flush(): void {
    const queue = this.#queue
    if (queue.length === 0) return
    this.#queue = []
    this.#queuedBytes = 0
    const parts: Buffer[] = []
    for (const item of queue) {
      if (Buffer.isBuffer(item)) parts.push(item)
      else addOutputFrames(item, parts)
    }
    this.#outputStream.write(parts.length === 1 ? parts[0]! : Buffer.concat(parts))
  }

  /** Hang up (idempotent); `closed` is reported once. */
  close(): void {
    if (this.#closed) return
    // What this turn gathered still goes out before the end.
    this.#flush()
    this.#closed = true
    clearTimeout(this.#helloDeadline)
    this.#input.pause()
    if (!this.#outputStream.writableEnded) this.#outputStream.end()
    this.#handlers.closed()
  }

  #frame(frame: Frame): void {
    if (this.#closed) return
    if (!this.#peer) return this.#hello(frame)
    if (frame.kind === 'output') return this.#handlers.output(frame.terminal, frame.offset, frame.bytes)
    if (frame.kind === 'input') {
      if (!this.#handlers.input) return this.#refuse(new ProtocolError('UNEXPECTED_FRAME', 'input frames go from the client to the session host only'))
      return this.#handlers.input(frame.terminal, frame.bytes)
    }
    const { message } = frame
    if (message.type === 'hello') return this.#refuse(new ProtocolError('UNEXPECTED_FRAME', 'a second hello on one connection'))
    if (message.type === 'error') {
      const code = peerText(message.code, QUOTED_CHARACTERS)
      if (typeof message.terminal === 'number' && this.#handlers.inputFailed)
        return this.#handlers.inputFailed(message.terminal, code, peerText(message.message))
      return this.#handlers.peerError(code, peerText(message.message))
    }
    // Liveness (version 2): answered here, by whichever side, before anything else can delay it.
    if (message.type === 'ping') return this.send({ type: 'pong', nonce: typeof message.nonce === 'number' ? message.nonce : 0 })
    this.#handlers.control(message)
  }

  #hello(frame: Frame): void {
    const message = frame.kind === 'control' ? frame.message : undefined
    if (message?.type === 'error') {
      this.#handlers.peerError(peerText(message.code, QUOTED_CHARACTERS), peerText(message.message))
      return this.close()
    }
    if (message?.type !== 'hello')
      return this.#refuse(
        new ProtocolError(
          'HELLO_REQUIRED',
          `expected a hello first, got ${message ? `a message of type ${describePeerValue(message.type)}` : 'an output frame'}`,
        ),
      )
    if (message.version !== PROTOCOL_VERSION) {
      const me = this.#role === 'client' ? 'this client' : 'this session host'
      const them = this.#role === 'client' ? 'the session host' : 'the client'
      return this.#refuse(
        new ProtocolError('PROTOCOL_VERSION', `${me} speaks protocol version ${PROTOCOL_VERSION}, ${them} sent version ${describePeerValue(message.version)}`),
      )
    }
    const features = Array.isArray(message.features) ? message.features : []
    const missing = FEATURES.filter((feature) => !features.includes(feature))
    if (missing.length > 0) return this.#refuse(new ProtocolError('PROTOCOL_VERSION', `the peer lacks required features: ${missing.join(', ')}`, true))
    clearTimeout(this.#helloDeadline)
    this.#peer = message as unknown as HelloMessage
    this.#handlers.hello(this.#peer)
  }

  /**
   * Run the handling of one frame: whatever it throws (a bug, or a peer that found one) closes this
   * connection alone, never the process that serves the others.
   */
  #guarded(handle: () => void): void {
    try {
      handle()
    } catch {
      this.close()
    }
  }

  /** Answer a bad frame with an error frame; hang up when it is fatal. */
  #refuse(error: ProtocolError): void {
    this.send({ type: 'error', code: error.code, message: error.message })
    this.#handlers.protocolError(error)
    if (error.fatal) this.close()
  }
}

const HEADER_PLACEHOLDER = Buffer.alloc(0)

/** The frames of one terminal's gathered output appended to `parts` (each header before its bytes; no closures: this runs per flush). */
function addOutputFrames(output: PendingOutput, parts: Buffer[]): void {
  let offset = output.offset
  // Each frame's header goes where its placeholder stands once its length is known.
  let frameStart = parts.push(HEADER_PLACEHOLDER) - 1
  let frameBytes = 0
  for (let piece of output.pieces) {
    while (frameBytes + piece.length > MAX_OUTPUT_PER_FRAME) {
      const room = MAX_OUTPUT_PER_FRAME - frameBytes
      parts.push(piece.subarray(0, room))
      parts[frameStart] = outputHeader(output.terminal, offset, MAX_OUTPUT_PER_FRAME)
      offset += MAX_OUTPUT_PER_FRAME
      piece = piece.subarray(room)
      frameStart = parts.push(HEADER_PLACEHOLDER) - 1
      frameBytes = 0
    }
    if (piece.length === 0) continue
    parts.push(piece)
    frameBytes += piece.length
  }
  if (frameBytes > 0 || output.bytes === 0) parts[frameStart] = outputHeader(output.terminal, offset, frameBytes)
  else parts.pop()
}
