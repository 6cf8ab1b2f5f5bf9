import { randomUUID } from 'node:crypto'
import type { ServerResponse } from 'node:http'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import type { Composition } from '../compose/load-config'
import { type McpConnection, connectMcp } from './connection'
import type { Agent } from 'dsh-agent'
import { errorMessage, formatDuration } from 'dsh-basics'

/** Why an HTTP session ended (`quiet`: idle for the shorter timeout, holding no work). */
export type SessionCloseReason = 'deleted' | 'idle' | 'quiet' | 'shutdown' | 'not-initialized'

/** Options of {@link HttpSessions}. */
export interface HttpSessionsOptions {
  /** The composition every session is an agent of. */
  composition: Pick<Composition, 'tools' | 'agents'>
  /** Close a session after this long without an open request or stream; 0 = never. */
  idleTimeoutMs: number
  /**
   * Close it already after this long when it holds no work (`holdsWork`); 0, or not shorter than
   * `idleTimeoutMs`, leaves every session the full idle timeout.
   */
  quietIdleTimeoutMs?: number
  /** Whether the session's agent holds work a client would come back for (see `holdsWork` in agent-work). */
  holdsWork?: (agent: Agent) => Promise<boolean>
  /** Sessions (agents) allowed at once, initializing ones included. */
  maxSessions: number
  /** Gap between progress notifications of a long call. */
  progressIntervalMs?: number
  /** One line per session opened or closed, for the operator. */
  log?: (line: string) => void
}

/**
 * One MCP session over HTTP: its SDK transport and its connection (one agent). It counts the HTTP
 * requests and streams open on it; when the last one ends, the idle timer starts.
 */
export class HttpSession {
  #open = 0
  #timer: NodeJS.Timeout | undefined
  #closing: Promise<void> | undefined

  constructor(
    /** The SDK transport; its `sessionId` is set once `initialize` was answered. */
    readonly transport: StreamableHTTPServerTransport,
    /** The MCP connection, i.e. the agent that owns this session's terminals and jobs. */
    readonly connection: McpConnection,
    private readonly table: HttpSessions,
  ) {}

  /** The `Mcp-Session-Id`, or `undefined` before `initialize` succeeded. */
  get id(): string | undefined {
    return this.transport.sessionId
  }

  /** True once closing began: requests are refused as an unknown session from then on. */
  get closing(): boolean {
    return this.#closing !== undefined
  }

  /** Count `res` as activity until it ends (a long send or an open GET stream keeps the session alive). */
  track(res: ServerResponse): void {
    this.#open++
    clearTimeout(this.#timer)
    this.#timer = undefined
    res.once('close', () => {
      this.#open--
      if (this.#open === 0 && !this.closing) this.#armIdle()
    })
  }

  /**
   * Idle now: close after the idle timeout, or, with a shorter quiet timeout, look then whether the
   * agent holds work (a busy terminal, a running job, a person attached): none closes the session,
   * some keeps it to the full idle timeout. Activity meanwhile (a request, a stream) cancels both.
   */
  #armIdle(): void {
    const { idleTimeoutMs, quietIdleTimeoutMs } = this.table
    if (idleTimeoutMs <= 0) return
    if (quietIdleTimeoutMs <= 0 || quietIdleTimeoutMs >= idleTimeoutMs) return this.#arm(idleTimeoutMs, () => void this.close('idle'))
    this.#arm(quietIdleTimeoutMs, async () => {
      const busy = await this.table.holdsWork(this.connection.agent).catch(() => true)
      // A request came meanwhile (it counts as open, or its end armed a new timer): it decides.
      if (this.#open > 0 || this.closing || this.#timer !== undefined) return
      if (!busy) return void this.close('quiet')
      this.table.log(
        `session ${shortId(this.id)} idle for ${formatDuration(quietIdleTimeoutMs)} but holds work (a terminal running a command, a job or a person attached): kept up to ${formatDuration(idleTimeoutMs)}`,
      )
      this.#arm(idleTimeoutMs - quietIdleTimeoutMs, () => void this.close('idle'))
    })
  }

  #arm(ms: number, fire: () => void): void {
    this.#timer = setTimeout(() => {
      this.#timer = undefined
      fire()
    }, ms)
    this.#timer.unref()
  }

  /** End the session: its agent's terminals and jobs close; resolves once they are gone. Idempotent. */
  close(reason: SessionCloseReason): Promise<void> {
    this.#closing ??= this.#close(reason)
    return this.#closing
  }

  async #close(reason: SessionCloseReason): Promise<void> {
    clearTimeout(this.#timer)
    this.table.forget(this)
    try {
      await this.connection.close()
      if (reason !== 'not-initialized') this.table.log(`session ${shortId(this.id)} closed (${this.#why(reason)}): its terminals and jobs are closed`)
    } catch (error) {
      this.table.log(`session ${shortId(this.id)} closed (${this.#why(reason)}), but closing its terminals and jobs failed: ${errorMessage(error)}`)
    }
  }

  #why(reason: SessionCloseReason): string {
    if (reason === 'idle') return `idle for ${formatDuration(this.table.idleTimeoutMs)}`
    if (reason === 'quiet') return `idle for ${formatDuration(this.table.quietIdleTimeoutMs)}, with no busy terminal, running job or person attached`
    return reason === 'deleted' ? 'the client ended it' : 'server shutting down'
  }
}

/**
 * The server's MCP sessions: creates each one (transport + agent), finds them by `Mcp-Session-Id`,
 * enforces the session cap, and closes them (DELETE, idle timeout, shutdown).
 */
export class HttpSessions {
  readonly #options: HttpSessionsOptions
  readonly #live = new Set<HttpSession>()
  readonly #byId = new Map<string, HttpSession>()
  #shuttingDown = false

  constructor(options: HttpSessionsOptions) {
    this.#options = options
  }

  /** Idle timeout of every session; 0 = none. */
  get idleTimeoutMs(): number {
    return this.#options.idleTimeoutMs
  }

  /** The shorter idle timeout of a session that holds no work; 0 = none. */
  get quietIdleTimeoutMs(): number {
    return this.#options.quietIdleTimeoutMs ?? 0
  }

  /** Whether an agent holds work (without a predicate: always, so the full idle timeout applies). */
  holdsWork(agent: Agent): Promise<boolean> {
    return this.#options.holdsWork?.(agent) ?? Promise.resolve(true)
  }

  /** Sessions alive now, initializing ones included. */
  get size(): number {
    return this.#live.size
  }

  /** True when no new session may start: the cap is reached or the server is shutting down. */
  get full(): boolean {
    return this.#live.size >= this.#options.maxSessions
  }

  /** True once {@link closeAll} began. */
  get shuttingDown(): boolean {
    return this.#shuttingDown
  }

  /** The live session with this `Mcp-Session-Id`, if any. */
  get(id: string): HttpSession | undefined {
    return this.#byId.get(id)
  }

  /**
   * A new session for an `initialize` request: a fresh transport and agent. It becomes findable by
   * id when the transport answers `initialize`; DELETE closes it before the response is sent.
   * `undefined` when a shutdown began meanwhile (the agent is ended again at once).
   */
  async open(): Promise<HttpSession | undefined> {
    let session!: HttpSession
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        this.#byId.set(id, session)
        this.log(`session ${shortId(id)} opened`)
      },
      onsessionclosed: () => session.close('deleted'),
    })
    const connection = await connectMcp(this.#options.composition, transport, { progressIntervalMs: this.#options.progressIntervalMs })
    session = new HttpSession(transport, connection, this)
    if (this.#shuttingDown) {
      await session.close('not-initialized')
      return undefined
    }
    this.#live.add(session)
    // Whatever ends the transport (DELETE, close), the session leaves the table and its agent ends.
    void connection.closed.then(
      () => session.close('deleted'),
      () => session.close('deleted'),
    )
    return session
  }

  /** Close every session (their terminals and jobs end) and refuse new ones; resolves when all are gone. */
  async closeAll(): Promise<void> {
    this.#shuttingDown = true
    await Promise.all([...this.#live].map((session) => session.close('shutdown')))
  }

  /** Drop a closing session from the table (called by the session itself). */
  forget(session: HttpSession): void {
    this.#live.delete(session)
    if (session.id !== undefined && this.#byId.get(session.id) === session) this.#byId.delete(session.id)
  }

  /** Write an operator log line, if a log was given. */
  log(line: string): void {
    this.#options.log?.(line)
  }
}

/** The first 8 characters of a session id: enough to tell sessions apart in a log, not to hijack one. */
function shortId(id: string | undefined): string {
  return id === undefined ? '(uninitialized)' : `${id.slice(0, 8)}…`
}
