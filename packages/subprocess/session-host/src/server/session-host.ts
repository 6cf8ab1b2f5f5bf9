import { chmodSync, lstatSync, rmSync } from 'node:fs'
import { connect, createServer, type Server, type Socket } from 'node:net'
import type { Readable, Writable } from 'node:stream'
import { Context, type Fiber, Logger, type Message } from '@deepseek-ai/cordis'
import type { SubprocessRuntime } from 'dsh-subprocess'
import * as localProvider from 'dsh-subprocess-local'
import type { LocalSubprocessConfig } from 'dsh-subprocess-local'
import { DEFAULT_MAX_TERMINALS } from '../defaults'
import { HELLO_DEADLINE_MS } from '../protocol/channel'
import { encodeHandoffAnswer, parseHandoffOffer, readHandoffLine, startsHandoffOffer } from '../protocol/handoff'
import { ensureSocketDir } from '../runtime-dir'
import { ClientConnection } from './connection'
import { takeOverStdio } from './stdio-takeover'
import { TerminalTable } from './terminal-table'

/** How a session host runs. */
export interface SessionHostOptions {
  /** Unacknowledged output bytes per terminal before its PTY is paused. */
  readonly windowBytes: number
  /** Exit after this long with no client and no detached terminal; 0 never. */
  readonly idleExitMs: number
  /** Terminals it holds at most, of every connection, detached ones included (default {@link DEFAULT_MAX_TERMINALS}). */
  readonly maxTerminals?: number
  /** Config of the dsh-subprocess-local it mounts. */
  readonly subprocess?: Partial<LocalSubprocessConfig>
  /** Diagnostics (the bin writes them to stderr). */
  readonly log: (message: string) => void
  /** Called once the idle time ran out (the bin closes and exits). */
  readonly onIdle?: () => void
}

/** How long output still queued for a handed-over stdout may take to drain once its connection ended. */
const TAKEN_OUTPUT_LINGER_MS = 2_000

/** Cordis' numeric level of `warn`: warnings and errors reach the log, debug does not. */
const WARN_LEVEL = 2

/** Another live session host already listens on the socket path. */
export class SessionHostRunningError extends Error {
  /** Always `SESSION_HOST_RUNNING`. */
  readonly code = 'SESSION_HOST_RUNNING'

  constructor(path: string) {
    super(`a session host already listens on ${path}`)
    this.name = 'SessionHostRunningError'
  }
}

/**
 * A session host: its own Cordis context with dsh-subprocess-local mounted, serving the terminal
 * handle contract to clients over streams (stdio) or a private Unix socket.
 */
export class SessionHost {
  readonly #provider: Fiber
  readonly #subprocess: SubprocessRuntime
  readonly #options: SessionHostOptions
  readonly #connections = new Set<ClientConnection>()
  readonly #table: TerminalTable
  #server: Server | undefined
  #socket: { path: string; inode: number } | undefined
  #idleTimer: NodeJS.Timeout | undefined
  #closing: Promise<void> | undefined
  /** Connections whose first bytes are still awaited: the idle exit waits for them too. */
  #pendingAccepts = 0

  private constructor(root: Context, provider: Fiber, options: SessionHostOptions) {
    this.#provider = provider
    this.#subprocess = root.subprocess
    this.#options = options
    this.#table = new TerminalTable(options.maxTerminals ?? DEFAULT_MAX_TERMINALS, () => this.#armIdle())
    this.#armIdle()
  }

  /** Mount the local provider in a fresh context. */
  static async start(options: SessionHostOptions): Promise<SessionHost> {
    const root = new Context()
    const exporter = {
      colors: 0 as const,
      levels: { default: WARN_LEVEL },
      export: (message: Message) => options.log(`[${message.type}] ${message.name} ${Logger.format(exporter, message)}`),
    }
    root.logger.exporter(exporter)
    const provider = await root.plugin(localProvider, options.subprocess ?? {})
    return new SessionHost(root, provider, options)
  }

  /** Serve one client over a pair of streams (the socket twice, or stdin and stdout); `onEnded` once it ended. */
  serve(input: Readable, output: Writable, onEnded?: () => void): ClientConnection {
    this.#disarmIdle()
    const connection = new ClientConnection(input, output, {
      subprocess: this.#subprocess,
      windowBytes: this.#options.windowBytes,
      table: this.#table,
      log: this.#options.log,
      ended: (ended) => {
        this.#connections.delete(ended)
        onEnded?.()
        this.#armIdle()
      },
    })
    this.#connections.add(connection)
    return connection
  }

  /**
   * Listen on `path` (its directory created 0700 and checked, the socket 0600). A socket left by a
   * dead session host is replaced; a live one makes this reject with `SESSION_HOST_RUNNING`.
   */
  async listen(path: string): Promise<void> {
    ensureSocketDir(path)
    if (await answers(path)) throw new SessionHostRunningError(path)
    rmSync(path, { force: true })
    const server = createServer((socket) => void this.#accept(socket))
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(path, () => {
        server.off('error', reject)
        resolve()
      })
    })
    chmodSync(path, 0o600)
    this.#server = server
    this.#socket = { path, inode: lstatSync(path).ino }
  }

  /**
   * A new socket connection: a client's frames, or a `--stdio` relay's handoff offer (PROTOCOL.md,
   * "Transports"). A taken offer serves the relay's own stdin and stdout, and the socket only
   * stands for the relay's life: its end ends that client, and that client's end closes it.
   */
  async #accept(socket: Socket): Promise<void> {
    socket.on('error', () => socket.destroy())
    this.#pendingAccepts += 1
    this.#disarmIdle()
    const opening = await readHandoffLine(socket, startsHandoffOffer, HELLO_DEADLINE_MS)
    this.#pendingAccepts -= 1
    if (opening.kind === 'frames' && !this.#closing) return this.#serveSocket(socket)
    if (opening.kind !== 'line' || this.#closing) {
      socket.destroy()
      return this.#armIdle()
    }
    const offer = parseHandoffOffer(opening.line)
    if ('invalid' in offer) {
      this.#options.log(`refused a handoff: ${offer.invalid}`)
      socket.end(encodeHandoffAnswer({ declined: offer.invalid }))
      return this.#armIdle()
    }
    const taken = takeOverStdio(offer.pid)
    if (typeof taken === 'string') {
      // The relay copies bytes itself; the socket carries this client's frames as before.
      socket.write(encodeHandoffAnswer({ declined: taken }))
      return this.#serveSocket(socket)
    }
    socket.write(encodeHandoffAnswer({ taken: true }))
    const release = () => {
      taken.close(TAKEN_OUTPUT_LINGER_MS)
      socket.destroy()
    }
    // The channel ends its output first (after detaching durable terminals): the relay exits then,
    // so the link's far end sees the end without waiting for the other terminals' teardown.
    taken.output.once('finish', release)
    const connection = this.serve(taken.input, taken.output, release)
    socket.once('close', () => void connection.end())
    socket.resume()
  }

  /** Serve the socket's frames; the first line's read left it paused, with what it read given back. */
  #serveSocket(socket: Socket): void {
    this.serve(socket, socket)
    socket.resume()
  }

  /** Stop listening, end every client, terminate every terminal (durable and detached ones too) and unload the provider. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#disarmIdle()
      this.#server?.close()
      this.#removeSocket()
      await Promise.allSettled([...this.#connections].map((connection) => connection.end(true)))
      await this.#table.closeDetached()
      await this.#provider.dispose()
    })()
    return this.#closing
  }

  /** Remove the socket file, only while it still is the one this host created. */
  #removeSocket(): void {
    if (!this.#socket) return
    try {
      if (lstatSync(this.#socket.path).ino === this.#socket.inode) rmSync(this.#socket.path, { force: true })
    } catch {
      // Already gone.
    }
  }

  #armIdle(): void {
    this.#disarmIdle()
    // A detached terminal waits for its adopter: the session host stays while one exists.
    if (this.#options.idleExitMs <= 0 || this.#connections.size > 0 || this.#pendingAccepts > 0 || this.#table.detached > 0 || this.#closing) return
    this.#idleTimer = setTimeout(() => this.#options.onIdle?.(), this.#options.idleExitMs)
  }

  #disarmIdle(): void {
    if (this.#idleTimer) clearTimeout(this.#idleTimer)
    this.#idleTimer = undefined
  }
}

/**
 * True when something accepts a connection on `path` (a live session host), or is alive but cannot
 * take one now: EAGAIN is a live listener whose backlog is full (stopped, busy), not a stale socket.
 */
function answers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(path)
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'EAGAIN'))
  })
}
