import { connectLocalSessionHost, defaultSocketPath, sessionHostCommand } from 'dsh-session-host'
import { SessionHostClient } from './client'
import type { RemoteSubprocessConfig } from './config'
import { runConnectCommand } from './connect-command'
import { SubprocessError } from 'dsh-subprocess'

/** How one target is reached: a connect command, or the local per-user socket (started on first use). */
export type TargetRoute = { readonly connect: readonly string[] } | { readonly socket: true }

/**
 * One target's connection, owned for the provider's life: made on first use, shared by the target's
 * terminals, and made again by the next call after it was lost (the link dropped, the session host
 * died). A connect command ends with its connection.
 */
export class TargetLink {
  readonly #name: string
  readonly #route: TargetRoute
  readonly #config: RemoteSubprocessConfig
  readonly #report: (message: string) => void
  readonly #stops = new Set<() => void>()
  #connection: Promise<SessionHostClient> | undefined
  /** Connections that were made (their hello came). */
  readonly #made = new WeakSet<Promise<SessionHostClient>>()
  #closed = false

  constructor(name: string, route: TargetRoute, config: RemoteSubprocessConfig, report: (message: string) => void) {
    this.#name = name
    this.#route = route
    this.#config = config
    this.#report = report
  }

  /** The target's name (`local` or a key of `targets`). */
  get name(): string {
    return this.#name
  }

  /**
   * Whether the link runs through a connect command: a lost connection may then be the link's (ssh,
   * a relay), with the session host beyond it alive. Over the local socket it is the session host's death.
   */
  get relayed(): boolean {
    return 'connect' in this.#route
  }

  /** The shared connection, made on first use and again after a failed start or a loss. */
  client(): Promise<SessionHostClient> {
    // After close, nothing connects again: a re-adoption still under way must not leave a connection behind.
    if (this.#closed) return Promise.reject(new SubprocessError('SPAWN_FAILED', `target ${this.#name}: the provider is unloading`))
    if (this.#connection) return this.#connection
    const connection = this.#connect()
    this.#connection = connection
    const forget = () => {
      if (this.#connection === connection) this.#connection = undefined
    }
    connection.then((client) => {
      this.#made.add(connection)
      return client.closed.then(forget)
    }, forget)
    return connection
  }

  /** A connection other than `dead` (which was lost, though the link may not have noticed it yet): made anew when needed. */
  async clientAfter(dead: SessionHostClient): Promise<SessionHostClient> {
    const connection = this.client()
    if ((await connection) !== dead) return connection
    if (this.#connection === connection) this.#connection = undefined
    return this.client()
  }

  /** Hang up (the session host then ends this connection's non-durable terminals) and end a connect command. */
  async close(): Promise<void> {
    this.#closed = true
    const connection = this.#connection
    this.#connection = undefined
    // A connection still being made (a host that accepted and hangs) is not waited for: its command ends now.
    if (connection && !this.#made.has(connection)) for (const stop of this.#stops) stop()
    await connection?.then((client) => client.close()).catch(() => undefined)
    for (const stop of this.#stops) stop()
  }

  async #connect(): Promise<SessionHostClient> {
    const report = (message: string) => this.#report(this.#name === 'local' ? message : `target ${this.#name}: ${message}`)
    const liveness = { livenessMs: this.#config.livenessMs, helloDeadlineMs: this.#config.startTimeoutMs }
    let client: SessionHostClient
    if ('connect' in this.#route) {
      const command = runConnectCommand(this.#route.connect)
      this.#stops.add(command.stop)
      const ended = () => {
        command.stop()
        this.#stops.delete(command.stop)
      }
      client = new SessionHostClient(command.input, command.output, report, ended, liveness)
    } else {
      const socket = await connectLocalSessionHost({
        socketPath: this.#config.socketPath ?? defaultSocketPath(),
        command: this.#config.sessionHostCommand ?? sessionHostCommand(),
        idleExitMs: this.#config.idleExitMs,
        startTimeoutMs: this.#config.startTimeoutMs,
      })
      client = new SessionHostClient(socket, socket, report, undefined, { ...liveness, inputFrames: true })
    }
    await client.ready
    return client
  }
}
