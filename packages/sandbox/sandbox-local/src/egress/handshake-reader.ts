import type { Socket } from 'node:net'

/**
 * Reads a proxy client's handshake (an HTTP request head, SOCKS5 frames) off its socket, bounded:
 * at most `limit` bytes are held, and a client that ends or errs mid-handshake rejects the read.
 * {@link release} hands back what arrived after the handshake, to be forwarded before the relay.
 */
export class HandshakeReader {
  readonly #socket: Socket
  readonly #limit: number
  #buffer: Buffer = Buffer.alloc(0)
  #ended: Error | undefined
  #wake: (() => void) | undefined
  readonly #onData = (chunk: Buffer): void => {
    this.#buffer = Buffer.concat([this.#buffer, chunk])
    if (this.#buffer.length > this.#limit) this.#socket.pause()
    this.#notify()
  }
  readonly #onEnd = (): void => {
    this.#ended ??= new HandshakeError('the client closed the connection during the handshake')
    this.#notify()
  }

  constructor(socket: Socket, limit: number) {
    this.#socket = socket
    this.#limit = limit
    socket.on('data', this.#onData)
    socket.on('end', this.#onEnd)
    socket.on('close', this.#onEnd)
  }

  /** The next `count` bytes, left in place for the next read. */
  async peek(count: number): Promise<Buffer> {
    while (this.#buffer.length < count) await this.#more()
    return this.#buffer.subarray(0, count)
  }

  /** Exactly `count` bytes. */
  async bytes(count: number): Promise<Buffer> {
    while (this.#buffer.length < count) await this.#more()
    const taken = this.#buffer.subarray(0, count)
    this.#buffer = this.#buffer.subarray(count)
    return taken
  }

  /** Everything up to and including the first `delimiter`; rejects with `tooLong` once `limit` bytes came without one. */
  async through(delimiter: Buffer): Promise<Buffer> {
    for (;;) {
      const end = this.#buffer.indexOf(delimiter)
      const length = end < 0 ? this.#buffer.length : end + delimiter.length
      if (length > this.#limit) throw new HandshakeError('the request head is too long', true)
      if (end >= 0) return this.bytes(length)
      await this.#more()
    }
  }

  /** Stop reading and return the bytes that came after the handshake; the socket is left paused. */
  release(): Buffer {
    this.#socket.off('data', this.#onData)
    this.#socket.off('end', this.#onEnd)
    this.#socket.off('close', this.#onEnd)
    this.#socket.pause()
    const rest = this.#buffer
    this.#buffer = Buffer.alloc(0)
    return rest
  }

  #more(): Promise<void> {
    if (this.#ended !== undefined) return Promise.reject(this.#ended)
    this.#socket.resume()
    return new Promise((resolve) => {
      this.#wake = resolve
    })
  }

  #notify(): void {
    const wake = this.#wake
    this.#wake = undefined
    wake?.()
  }
}

/** A handshake that cannot complete: the client left, or sent more than a handshake may hold. */
export class HandshakeError extends Error {
  constructor(
    message: string,
    /** True when the client sent too much (an HTTP client gets 431 for it). */
    readonly tooLong = false,
  ) {
    super(message)
    this.name = 'HandshakeError'
  }
}
