import { chmodSync, rmSync } from 'node:fs'
import { createServer, type Server, type Socket } from 'node:net'
import type { HostPattern } from 'dsh-sandbox'
import { decideDestination, displayTarget, type EgressRefusalReason, type EgressVerdict, type FixedAddresses, printable } from './destination'
import { HandshakeReader } from './handshake-reader'
import { serveHttp } from './http-proxy'
import { SOCKS5_VERSION, serveSocks5 } from './socks5'

/** Connections one proxy (one sandbox) serves at once; more are closed at once (each holds two sockets and buffers). */
export const MAX_EGRESS_CONNECTIONS = 256

/** First byte of the forwarder's hold connection: the proxy lives while it stays open. */
export const HOLD_BYTE = 0x00

/** The first byte of a SOCKS4 request, which the proxy rejects (it speaks SOCKS5). */
const SOCKS4_VERSION = 0x04

/** How long a proxy waits for its sandbox's forwarder to hold it (a confined argv never spawned is dropped then). */
export const HOLD_WAIT_MS = 120_000

/** Bytes a handshake may hold (an HTTP request head; SOCKS frames are far smaller). */
const HANDSHAKE_LIMIT = 32 * 1024

/** How long a client gets to finish its handshake before the connection is dropped. */
const HANDSHAKE_TIMEOUT_MS = 30_000

/** One refused request, as the host's log and listeners see it. */
export interface EgressRefusal {
  /** The host the client asked for, as it asked (anything unprintable escaped as `\u{…}`). */
  readonly host: string
  readonly port: number
  /** Which side of the proxy it came through. */
  readonly protocol: 'http' | 'socks5'
  /** Stable code: `NOT_ALLOWED` (not on the list), `FORBIDDEN_ADDRESS` (the host's own or link-local), `UNRESOLVED`. */
  readonly reason: EgressRefusalReason
  /** One line naming the host and what is wrong. */
  readonly detail: string
}

/** What one proxy serves: its socket, its list, and where refusals are reported. */
export interface EgressProxyOptions {
  /** The Unix socket to listen on; bound into the sandboxes it serves. */
  readonly socketPath: string
  /** The parsed allowlist. */
  readonly patterns: readonly HostPattern[]
  /** Names resolved to fixed addresses before DNS. */
  readonly fixedAddresses: FixedAddresses
  /** Called for every refused request (the provider logs it). */
  readonly onRefused: (refusal: EgressRefusal) => void
  /** Called once the proxy closed: its hold ended, never came, or {@link EgressProxy.close} was called. */
  readonly onClosed?: () => void
  /** How long to wait for the hold (default {@link HOLD_WAIT_MS}). */
  readonly holdWithinMs?: number
}

/**
 * The host's egress proxy for one sandbox: HTTP (CONNECT and absolute http:// URLs) and SOCKS5
 * on one Unix socket, told apart by the first byte. Every request goes through
 * `decideDestination`; a refusal is answered in the client's protocol and reported. It lives while
 * the sandbox's forwarder holds it: a connection whose first byte is {@link HOLD_BYTE}, open until the
 * sandbox ends; without one within `holdWithinMs`, or once it closes, the proxy closes itself.
 */
export class EgressProxy {
  readonly socketPath: string
  readonly #options: EgressProxyOptions
  readonly #server: Server
  readonly #connections = new Set<Socket>()
  #holdTimer: NodeJS.Timeout | undefined
  #held = false
  #closing: Promise<void> | undefined

  private constructor(options: EgressProxyOptions, server: Server) {
    this.socketPath = options.socketPath
    this.#options = options
    this.#server = server
  }

  /** Listen on `options.socketPath` (0600: only the host's user, which the sandboxes run as, may connect). */
  static async start(options: EgressProxyOptions): Promise<EgressProxy> {
    const server = createServer({ allowHalfOpen: true, pauseOnConnect: true })
    const proxy = new EgressProxy(options, server)
    server.maxConnections = MAX_EGRESS_CONNECTIONS
    server.on('connection', (socket) => proxy.#serve(socket))
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(options.socketPath, () => {
        server.off('error', reject)
        resolve()
      })
    })
    chmodSync(options.socketPath, 0o600)
    proxy.#holdTimer = setTimeout(() => void proxy.close(), options.holdWithinMs ?? HOLD_WAIT_MS)
    proxy.#holdTimer.unref()
    return proxy
  }

  /** Stop listening, cut every relayed connection and remove the socket; once, however often called. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      clearTimeout(this.#holdTimer)
      for (const socket of this.#connections) socket.destroy()
      await new Promise<void>((resolve) => this.#server.close(() => resolve()))
      rmSync(this.socketPath, { force: true })
      this.#options.onClosed?.()
    })()
    return this.#closing
  }

  #serve(socket: Socket): void {
    this.#connections.add(socket)
    socket.on('close', () => this.#connections.delete(socket))
    socket.on('error', () => socket.destroy())
    socket.setTimeout(HANDSHAKE_TIMEOUT_MS, () => socket.destroy())
    const reader = new HandshakeReader(socket, HANDSHAKE_LIMIT)
    void this.#handshake(socket, reader).catch(() => socket.destroy())
  }

  async #handshake(socket: Socket, reader: HandshakeReader): Promise<void> {
    // Peeked, not read: each protocol parses its frames from the start.
    const [first] = await reader.peek(1)
    if (first === HOLD_BYTE) return this.#hold(socket, reader)
    // SOCKS4 has no names the allowlist could see: rejected at once (reply 0x5B), not left to time out as HTTP.
    if (first === SOCKS4_VERSION) {
      socket.end(Buffer.from([0, 0x5b, 0, 0, 0, 0, 0, 0]))
      return
    }
    const protocol = first === SOCKS5_VERSION ? 'socks5' : 'http'
    const decide = (host: string, port: number) => this.#decide(protocol, host, port)
    if (protocol === 'socks5') await serveSocks5(socket, reader, decide)
    else await serveHttp(socket, reader, { decide, refusalAdvice })
    // Relayed: the handshake's time bound no longer applies. Answered and ended: it still drops a
    // client that never closes its side.
    if (!socket.writableEnded) socket.setTimeout(0)
  }

  /** The forwarder's hold: the first one keeps the proxy alive until it closes; any other is dropped. */
  #hold(socket: Socket, reader: HandshakeReader): void {
    if (this.#held) {
      socket.destroy()
      return
    }
    this.#held = true
    clearTimeout(this.#holdTimer)
    reader.release()
    socket.setTimeout(0)
    // Nothing more is expected on it; whatever comes is read and dropped, so it never fills a buffer.
    socket.on('data', () => {})
    // Half-open connections are allowed, so the forwarder's end arrives as 'end' before any 'close'.
    socket.on('end', () => void this.close())
    socket.on('close', () => void this.close())
    socket.resume()
  }

  async #decide(protocol: EgressRefusal['protocol'], host: string, port: number): Promise<EgressVerdict> {
    const verdict = await decideDestination(this.#options.patterns, this.#options.fixedAddresses, host, port)
    if (!verdict.allowed) this.#options.onRefused({ host: printable(host), port, protocol, reason: verdict.reason, detail: verdict.detail })
    return verdict
  }
}

/** What a refused client (and the model reading its output) is told: the host, and how to allow it. */
export function refusalAdvice(host: string, port: number, detail: string): string {
  return (
    `dsh-terminal sandbox: ${detail}; connection to ${displayTarget(host, port)} refused. ` +
    `To allow it, the user adds "${printable(host)}" (or a "*.domain" pattern) to allowedHosts in the sandbox policy (dsh-sandbox-policy) and opens a new session.`
  )
}
