import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js'
import type { Composition } from '../compose/load-config'
import { METRICS_PATH, sendMetrics } from '../metrics/endpoint'
import { HostMetrics } from '../metrics/host-metrics'
import { holdsWork } from './agent-work'
import { LIVE_PATH, READY_PATH, ReadinessProbe, sendProbe } from './probes'
import { DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_QUIET_IDLE_TIMEOUT_MS, endpointUrl, type ListenAddress, MCP_PATH } from './http-address'
import { checkBearer, originAllowed, TOKEN_ENV } from './http-auth'
import { sendHttpError } from './http-errors'
import { HttpSessions } from './http-sessions'
import { errorMessage } from 'dsh-basics'

/** Default cap on MCP sessions (agents) at once; each may hold its own terminals. */
export const DEFAULT_MAX_SESSIONS = 64

/** Largest `initialize` body read by the host itself (the SDK bounds every later request the same way). */
export const MAX_INITIALIZE_BYTES = 4 * 1024 * 1024

const REALM = 'Bearer realm="dsh-terminal"'

/** Options of {@link McpHttpServer.start}. */
export interface McpHttpOptions {
  /** Interface and port; port 0 picks a free one ({@link McpHttpServer.address} tells which). */
  address: ListenAddress
  /** The bearer token every request must carry. */
  token: string
  /** Close a session after this long with no open request or stream; 0 = never. Default 30 min. */
  idleTimeoutMs?: number
  /**
   * Close a session that holds no work (no busy terminal, running job or person attached) already
   * after this long idle; 0 = no shorter timeout. Default {@link DEFAULT_QUIET_IDLE_TIMEOUT_MS}.
   */
  quietIdleTimeoutMs?: number
  /** Sessions allowed at once (default {@link DEFAULT_MAX_SESSIONS}); one more `initialize` gets 503. */
  maxSessions?: number
  /** Gap between progress notifications of a long call. */
  progressIntervalMs?: number
  /** Operator log lines (session opened/closed); nothing by default. */
  log?: (line: string) => void
  /**
   * `GET /metrics` (Prometheus text format): `token` (the default) asks for the bearer token like every
   * other path, `open` answers without it (a scraper that cannot send one), `off` serves none.
   */
  metrics?: 'token' | 'open' | 'off'
}

/**
 * The composition served over MCP Streamable HTTP (official SDK transport, one per session). Every
 * request passes the Origin check and the bearer token first; each MCP session is one agent, with
 * the same tools and isolation as a stdio client, closed on DELETE, idle timeout or {@link close}.
 */
export class McpHttpServer {
  readonly #http: Server
  readonly #sessions: HttpSessions
  readonly #token: string
  readonly #metrics: HostMetrics | undefined
  readonly #metricsOpen: boolean
  readonly #readiness: ReadinessProbe
  #closing: Promise<void> | undefined

  private constructor(http: Server, sessions: HttpSessions, token: string, metrics: HostMetrics | undefined, metricsOpen: boolean, readiness: ReadinessProbe) {
    this.#http = http
    this.#sessions = sessions
    this.#token = token
    this.#metrics = metrics
    this.#metricsOpen = metricsOpen
    this.#readiness = readiness
  }

  /** Listen on `options.address` and serve; rejects with an actionable message if it cannot listen. */
  static async start(composition: Pick<Composition, 'tools' | 'agents' | 'root'>, options: McpHttpOptions): Promise<McpHttpServer> {
    const sessions = new HttpSessions({
      composition,
      idleTimeoutMs: options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
      quietIdleTimeoutMs: options.quietIdleTimeoutMs ?? DEFAULT_QUIET_IDLE_TIMEOUT_MS,
      holdsWork: (agent) => holdsWork(composition.root, agent),
      maxSessions: options.maxSessions ?? DEFAULT_MAX_SESSIONS,
      progressIntervalMs: options.progressIntervalMs,
      log: options.log,
    })
    let server!: McpHttpServer
    const http = createServer((req, res) => void server.#handle(req, res))
    const mode = options.metrics ?? 'token'
    const metrics = mode === 'off' ? undefined : HostMetrics.attach(composition)
    const readiness = new ReadinessProbe(composition, { shuttingDown: () => sessions.shuttingDown, full: () => sessions.full })
    server = new McpHttpServer(http, sessions, options.token, metrics, mode === 'open', readiness)
    try {
      await new Promise<void>((resolve, reject) => {
        http.once('error', (error: NodeJS.ErrnoException) => {
          const { host, port } = options.address
          const hint = error.code === 'EADDRINUSE' ? '; pick another port, or 0 for a free one' : ''
          reject(new Error(`cannot listen on ${host}:${port}: ${error.code ?? error.message}${hint}`))
        })
        http.listen({ host: options.address.host, port: options.address.port }, () => resolve())
      })
    } catch (error) {
      metrics?.close()
      throw error
    }
    return server
  }

  /** The interface and port actually bound (the kernel's choice for port 0). */
  get address(): ListenAddress {
    const bound = this.#http.address() as AddressInfo
    return { host: bound.address, port: bound.port }
  }

  /** The endpoint a client on this machine connects to, e.g. `http://127.0.0.1:8080/mcp`. */
  get url(): string {
    return endpointUrl(this.address)
  }

  /** MCP sessions alive now. */
  get sessionCount(): number {
    return this.#sessions.size
  }

  /**
   * Stop: refuse new requests, close every session (their terminals and jobs end), then drop the
   * remaining connections. Resolves once everything is closed. Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      const stopped = new Promise<void>((resolve) => this.#http.close(() => resolve()))
      await this.#sessions.closeAll()
      this.#metrics?.close()
      this.#http.closeAllConnections()
      await stopped
    })()
    return this.#closing
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      await this.#route(req, res)
    } catch (error) {
      this.#sessions.log(`request failed: ${errorMessage(error)}`)
      sendHttpError(res, 'INTERNAL_ERROR', `the request failed in the server: ${errorMessage(error)}`)
    }
  }

  async #route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const origin = req.headers.origin
    if (!originAllowed(origin)) {
      return sendHttpError(
        res,
        'FORBIDDEN_ORIGIN',
        `Origin ${origin} is not a loopback origin: web pages elsewhere may not call this server (DNS-rebinding protection); native clients send no Origin`,
      )
    }
    const path = new URL(req.url ?? '/', 'http://localhost').pathname
    // Orchestrators' probes carry no token; they learn only a verdict and a stable code.
    if (path === LIVE_PATH) return sendProbe(req, res, this.#sessions.shuttingDown ? { ready: false, reason: 'SHUTTING_DOWN' } : { ready: true }, 'ok')
    if (path === READY_PATH) return sendProbe(req, res, await this.#readiness.check(), 'ready')
    const metrics = path === METRICS_PATH ? this.#metrics : undefined
    if (metrics && this.#metricsOpen) return sendMetrics(metrics, req, res)
    const auth = checkBearer(req.headers, this.#token)
    if (auth === 'missing') {
      return sendHttpError(
        res,
        'UNAUTHORIZED',
        `missing bearer token: send "Authorization: Bearer <token>" with the token the server printed at startup (or the value of ${TOKEN_ENV})`,
        { 'WWW-Authenticate': REALM },
      )
    }
    if (auth === 'invalid') {
      return sendHttpError(
        res,
        'UNAUTHORIZED',
        `invalid bearer token: use the token the server printed at startup (or the value of ${TOKEN_ENV}); a restarted server has a new one unless ${TOKEN_ENV} is set`,
        {
          'WWW-Authenticate': `${REALM}, error="invalid_token"`,
        },
      )
    }
    if (metrics) return sendMetrics(metrics, req, res)
    if (path !== MCP_PATH) return sendHttpError(res, 'NOT_FOUND', `no endpoint at ${path}: the MCP endpoint is ${MCP_PATH}`)
    const shuttingDown = 'the server is shutting down; every session is being closed'
    if (this.#sessions.shuttingDown) return sendHttpError(res, 'SHUTTING_DOWN', shuttingDown)

    const id = req.headers['mcp-session-id']
    if (typeof id === 'string' && id !== '') {
      const session = this.#sessions.get(id)
      if (!session || session.closing) {
        return sendHttpError(
          res,
          'UNKNOWN_SESSION',
          `unknown MCP session ${id}: it ended (DELETE, idle timeout or a server restart), and its terminals and jobs were closed with it; start a new session with initialize, without Mcp-Session-Id`,
        )
      }
      session.track(res)
      return session.transport.handleRequest(req, res)
    }

    const required = `Mcp-Session-Id header missing: send initialize first, then the session id it returned in the Mcp-Session-Id header with every request`
    if (req.method !== 'POST') return sendHttpError(res, 'SESSION_REQUIRED', required)
    const body = await readJson(req)
    if (body === TOO_LARGE) return sendHttpError(res, 'PAYLOAD_TOO_LARGE', `request body over ${MAX_INITIALIZE_BYTES} bytes`, { Connection: 'close' })
    if (body === NOT_JSON) return sendHttpError(res, 'PARSE_ERROR', 'request body is not JSON')
    const initializing = Array.isArray(body) ? body.some(isInitializeRequest) : isInitializeRequest(body)
    if (!initializing) return sendHttpError(res, 'SESSION_REQUIRED', required)
    if (this.#sessions.full) {
      return sendHttpError(
        res,
        'TOO_MANY_SESSIONS',
        `${this.#sessions.size} MCP sessions are open, the most this server allows; end one (DELETE) or wait for an idle one to time out`,
      )
    }
    const session = await this.#sessions.open()
    if (!session) return sendHttpError(res, 'SHUTTING_DOWN', shuttingDown)
    session.track(res)
    try {
      await session.transport.handleRequest(req, res, body)
    } finally {
      // A refused initialize (bad batch, bad version header) leaves no session behind, and no agent.
      if (session.id === undefined) await session.close('not-initialized')
    }
  }
}

const TOO_LARGE = Symbol('too large')
const NOT_JSON = Symbol('not JSON')

/**
 * Read and parse a request body of at most {@link MAX_INITIALIZE_BYTES}. A larger one is drained,
 * not stored, so the refusal still reaches the client.
 */
async function readJson(req: IncomingMessage): Promise<unknown> {
  if (Number(req.headers['content-length'] ?? 0) > MAX_INITIALIZE_BYTES) return TOO_LARGE
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size <= MAX_INITIALIZE_BYTES) chunks.push(chunk)
  }
  if (size > MAX_INITIALIZE_BYTES) return TOO_LARGE
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown
  } catch {
    return NOT_JSON
  }
}
