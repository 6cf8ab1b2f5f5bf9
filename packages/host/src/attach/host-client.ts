import { readFileSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { errorMessage } from 'dsh-basics'
import { type ClientMessage, encodeLine, LineSplitter, type ServerMessage } from '../human/protocol'
import { assertOwnedEntry, type HostFiles } from '../human/runtime-dir'

/** How long a host may stay silent while the client waits for its answer during discovery. */
const ANSWER_TIMEOUT_MS = 10_000

/** A failure talking to a host, with the protocol's (or the client's) stable code. */
export class AttachError extends Error {
  constructor(
    /** Stable code: a protocol error code, `FOREIGN_SOCKET`, `UNSAFE_RUNTIME_DIR`, `HOST_GONE`, `NO_SESSION`. */
    readonly code: string,
    message: string,
  ) {
    super(message)
    this.name = 'AttachError'
  }
}

/** An error as one line for a person: its message, then its stable code in parentheses when it has one. */
export function describeError(error: unknown): string {
  const code = (error as { code?: unknown } | null | undefined)?.code
  return typeof code === 'string' && code !== '' ? `${errorMessage(error)} (${code})` : errorMessage(error)
}

/**
 * One authenticated connection to a host's attach socket. It refuses a socket or token file that is
 * not ours before connecting, sends the token first, and hands every later message to `onMessage`.
 */
export class HostClient {
  readonly #splitter = new LineSplitter()
  #waiters: ((message: ServerMessage | undefined) => void)[] = []
  #listener: ((message: ServerMessage) => void) | undefined
  #closed = false
  /** Resolves when the host hung up (or the socket failed). */
  readonly closed: Promise<void>

  private constructor(
    private readonly socket: Socket,
    /** The host's files (its pid names them). */
    readonly files: HostFiles,
  ) {
    this.closed = new Promise((resolve) => {
      socket.on('close', () => {
        this.#release()
        resolve()
      })
    })
    socket.on('error', () => {})
    socket.on('data', (chunk: Buffer) => {
      let messages: ServerMessage[]
      try {
        messages = this.#splitter.push(chunk).map((line) => JSON.parse(line) as ServerMessage)
      } catch {
        socket.destroy() // Not our protocol: treat it as a host that went away.
        return
      }
      for (const message of messages) {
        const waiter = this.#waiters.shift()
        if (waiter) waiter(message)
        else this.#listener?.(message)
      }
    })
    // A host that accepts but never answers must not hang the listing; attached sessions turn this off.
    socket.setTimeout(ANSWER_TIMEOUT_MS, () => socket.destroy())
  }

  /** Check ownership of the socket and token, connect, and authenticate; rejects with an {@link AttachError}. */
  static async open(files: HostFiles): Promise<HostClient> {
    assertOwnedEntry(files.socketPath, 'socket')
    assertOwnedEntry(files.tokenPath, 'file')
    const token = readFileSync(files.tokenPath, 'utf8').trim()
    const socket = connect(files.socketPath)
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve)
      socket.once('error', (error) => reject(new AttachError('HOST_GONE', `cannot connect to ${files.socketPath}: ${error.message}`)))
    })
    const client = new HostClient(socket, files)
    const answer = await client.request({ type: 'hello', token })
    if (answer.type !== 'ok') {
      client.close()
      throw new AttachError('UNAUTHORIZED', `host ${files.pid} refused the token`)
    }
    return client
  }

  /** Send one message and wait for the next message from the host; an `error` answer rejects. */
  async request(message: ClientMessage): Promise<ServerMessage> {
    // Once closed, nothing would ever answer (the close already released the waiters it knew of).
    const reply = this.#closed ? undefined : await this.#ask(message)
    if (!reply) throw new AttachError('HOST_GONE', `host ${this.files.pid} closed the connection`)
    if (reply.type === 'error') throw new AttachError(reply.code, reply.message)
    return reply
  }

  #ask(message: ClientMessage): Promise<ServerMessage | undefined> {
    const answer = new Promise<ServerMessage | undefined>((resolve) => this.#waiters.push(resolve))
    this.send(message)
    return answer
  }

  /** Wait on an attached session however long it stays quiet. */
  stayConnected(): void {
    this.socket.setTimeout(0)
  }

  /** Send one message without waiting. */
  send(message: ClientMessage): void {
    if (!this.#closed) this.socket.write(encodeLine(message))
  }

  /** Receive every message no `request` waits for (output, end, errors about input). */
  onMessage(listener: (message: ServerMessage) => void): void {
    this.#listener = listener
  }

  /** Hang up; a request waiting for an answer, or made from now on, rejects with `HOST_GONE`. */
  close(): void {
    this.socket.end()
    this.socket.destroy()
    this.#release()
  }

  /** Mark the connection closed and tell every waiting request that no answer will come. */
  #release(): void {
    this.#closed = true
    for (const waiter of this.#waiters.splice(0)) waiter(undefined)
  }
}
