import type { Socket } from 'node:net'
import { errorMessage } from 'dsh-basics'
import type { TerminalHumanView } from 'dsh-terminal'
import { secretMatches } from '../mcp/http-auth'
import { HUMAN_CLIENTS, type HumanGateway } from './gateway'
import { MAX_UNREAD_BYTES } from './limits'
import {
  type AttachErrorCode,
  type ClientMessage,
  encodeLine,
  fromBase64,
  type HostInfo,
  LineSplitter,
  LineTooLongError,
  parseClientMessage,
  type ReadOnlyReason,
  type ServerMessage,
  toBase64,
} from './protocol'

/** How long a new client has to authenticate, and a refused one to read its error before it is cut off. */
const HELLO_TIMEOUT_MS = 10_000

/** What one connection needs from the server that accepted it. */
export interface SocketConnectionOptions {
  gateway: HumanGateway
  /** The secret of this host's token file. */
  token: string
  /** What `list` reports about this host. */
  host: HostInfo
  /** Bound of unread output before the client is dropped (default {@link MAX_UNREAD_BYTES}). */
  maxUnreadBytes?: number
}

/**
 * One client of a host's attach socket: it must prove it read the token file, then it may list
 * sessions and attach to one. Every failure becomes an `error` line; nothing a client sends can throw
 * out of here, and however the client goes, its view closes (which releases the writer role).
 */
export class SocketConnection {
  readonly #splitter = new LineSplitter()
  #authenticated = false
  #view: TerminalHumanView | undefined
  #attaching = false
  #readOnlyReason: ReadOnlyReason | undefined
  #queue: Promise<void> = Promise.resolve()
  #closed = false

  constructor(
    private readonly socket: Socket,
    private readonly options: SocketConnectionOptions,
  ) {
    // Same-uid clients only, but still: one that never says hello does not hold a connection forever.
    socket.setTimeout(HELLO_TIMEOUT_MS, () => this.#fail('UNAUTHORIZED', 'no hello in time; send {"type":"hello","token":…} first'))
    socket.on('data', (chunk: Buffer) => this.#receive(chunk))
    socket.on('error', () => this.close())
    socket.on('close', () => this.close())
  }

  /** Close the view (if any) and the socket, also one still flushing a fatal error; idempotent. */
  close(): void {
    this.#closed = true
    this.#closeView()
    if (!this.socket.destroyed) this.socket.destroy()
  }

  #receive(chunk: Buffer): void {
    if (this.#closed) return
    let lines: string[]
    try {
      lines = this.#splitter.push(chunk)
    } catch (error) {
      if (error instanceof LineTooLongError) return this.#fail('LINE_TOO_LONG', error.message)
      return this.#fail('BAD_MESSAGE', `unreadable input: ${String(error)}`)
    }
    for (const line of lines) {
      if (line.trim() === '') continue
      this.#queue = this.#queue.then(() => (this.#closed ? undefined : this.#handle(line))).catch((error: unknown) => this.#fail('BAD_MESSAGE', String(error)))
    }
  }

  async #handle(line: string): Promise<void> {
    const message = parseClientMessage(line)
    if (typeof message === 'string') {
      if (!this.#authenticated) return this.#fail('UNAUTHORIZED', `the first line must be {"type":"hello","token":…}; got a malformed line (${message})`)
      return this.#fail('BAD_MESSAGE', `malformed line: ${message}`)
    }
    if (!this.#authenticated) return this.#hello(message)
    switch (message.type) {
      case 'hello':
        return this.#error('BAD_MESSAGE', 'already authenticated')
      case 'list':
        return this.#send({ type: 'sessions', host: this.options.host, sessions: await this.options.gateway.sessions() })
      case 'attach':
        return this.#attach(message.sessionId, message.readOnly === true)
      case 'input':
        return this.#input(message.data)
      case 'detach':
        this.#closeView()
        return this.#send({ type: 'detached' })
    }
  }

  #hello(message: ClientMessage): void {
    if (message.type !== 'hello' || !secretMatches(message.token, this.options.token)) {
      return this.#fail('UNAUTHORIZED', 'wrong or missing token: send {"type":"hello","token":<contents of <pid>.token>} first')
    }
    this.#authenticated = true
    this.socket.setTimeout(0)
    this.#send({ type: 'ok', pid: this.options.host.pid })
  }

  async #attach(sessionId: string, readOnly: boolean): Promise<void> {
    if (this.#view || this.#attaching) return this.#error('ALREADY_ATTACHED', 'this connection is already attached; detach first')
    this.#attaching = true
    let view: TerminalHumanView
    try {
      // The view holds output (and an end) until the attach resolved, so the screen goes out first.
      view = await this.options.gateway.attach(
        sessionId,
        { onOutput: (bytes) => this.#output(bytes), onEnd: (reason) => this.#ended(reason) },
        HUMAN_CLIENTS.attach,
      )
    } catch (error) {
      this.#attaching = false
      const code = (error as { code?: string }).code
      return this.#error(code === 'NO_SESSION' || code === 'NO_TERMINALS' ? code : 'ATTACH_FAILED', errorMessage(error))
    }
    this.#attaching = false
    if (this.#closed) return view.close()
    this.#view = view
    this.#readOnlyReason = readOnly ? 'READ_ONLY' : undefined
    if (!readOnly) {
      try {
        view.takeWrite()
      } catch (error) {
        if ((error as { code?: string }).code !== 'HUMAN_WRITER_TAKEN') throw error
        this.#readOnlyReason = 'HUMAN_WRITER_TAKEN'
      }
    }
    this.#send({
      type: 'screen',
      sessionId: view.sessionId,
      data: toBase64(view.screen),
      ...(view.size ? { rows: view.size.rows, cols: view.size.cols } : {}),
      writer: view.writing,
      ...(this.#readOnlyReason ? { readOnlyReason: this.#readOnlyReason } : {}),
    })
  }

  async #input(data: string): Promise<void> {
    const view = this.#view
    if (!view) return this.#error('NOT_ATTACHED', 'attach to a session before sending input')
    if (!view.writing) {
      const reason = this.#readOnlyReason ?? 'HUMAN_WRITER_TAKEN'
      const why =
        reason === 'READ_ONLY' ? 'this attach is read-only (--read-only)' : 'another person holds the keyboard of this session (an attach or the web view)'
      return this.#error(reason, `input ignored: ${why}`)
    }
    try {
      await view.write(fromBase64(data).toString('utf8'))
    } catch (error) {
      const code = (error as { code?: string }).code
      this.#error(code === 'HUMAN_WRITER_TAKEN' ? code : 'ATTACH_FAILED', errorMessage(error))
    }
  }

  #output(bytes: Uint8Array): void {
    if (this.socket.writableLength > (this.options.maxUnreadBytes ?? MAX_UNREAD_BYTES)) {
      return this.#fail('SLOW_CONSUMER', 'this client left too much output unread; it was detached (the session keeps running)')
    }
    this.#send({ type: 'output', data: toBase64(bytes) })
  }

  #ended(reason: string): void {
    this.#view = undefined
    this.#send({ type: 'end', reason })
  }

  #closeView(): void {
    const view = this.#view
    this.#view = undefined
    view?.close()
  }

  #send(message: ServerMessage): void {
    if (!this.#closed && this.socket.writable) this.socket.write(encodeLine(message))
  }

  #error(code: AttachErrorCode, message: string): void {
    this.#send({ type: 'error', code, message })
  }

  /** Answer with a fatal error, stop watching, and hang up once the line is flushed. */
  #fail(code: AttachErrorCode, message: string): void {
    if (this.#closed) return
    this.#closeView()
    this.#send({ type: 'error', code, message, fatal: true })
    this.#closed = true
    this.socket.end()
    // A client that does not even read the error (e.g. a dropped slow watcher) is cut off after a while.
    this.socket.setTimeout(HELLO_TIMEOUT_MS, () => this.socket.destroy())
  }
}
