import type { Context } from '@deepseek-ai/cordis'
import {
  type AdoptedTerminal,
  type DetachedTerminal,
  scrubEnvironment,
  SubprocessError,
  SubprocessRuntime,
  type SubprocessTerminalHandle,
  type TerminalSpawnSpec,
  validateSpawnSpec,
  wrappedArgv,
} from 'dsh-subprocess'
import { errorMessage } from 'dsh-basics'
import { SessionHostClient } from './client'
import type { RemoteSubprocessConfig } from './config'
import { runConnectCommand } from './connect-command'
import { type AdoptResult, connectLocalSessionHost, defaultSocketPath, type ListResult, sessionHostCommand } from 'dsh-session-host'
import { RemoteTerminal } from './remote-terminal'
import type { AppliedTerminalLimits } from 'dsh-subprocess'

/** What a spawn answers over the wire. */
interface SpawnReply {
  /** The connection's number for the terminal. */
  readonly terminal: number
  /** Its top-level process. */
  readonly pid: number
  /** The caps in force. */
  readonly limits: AppliedTerminalLimits
}

/**
 * `ctx.subprocess` backed by a session host: terminals run there (next to their readiness proofs),
 * this side holds handles of the same contract. One connection is shared by every spawn; once it is
 * lost, the next spawn connects again (starting a fresh local session host when none answers).
 * Durable terminals outlive this provider: its disposal hangs up on them, and another provider of
 * the same user lists and adopts them.
 */
export class RemoteSubprocessRuntime extends SubprocessRuntime {
  private readonly config: RemoteSubprocessConfig
  private connection: Promise<SessionHostClient> | undefined
  private readonly terminals = new Set<RemoteTerminal>()
  private readonly stops = new Set<() => void>()

  constructor(ctx: Context, config: RemoteSubprocessConfig) {
    super(ctx)
    this.config = config
    ctx.effect(() => () => this.dispose(), 'subprocess-remote: terminate every terminal and hang up')
  }

  /** The session host's pid once connected (diagnostics and tests), from its hello. */
  async sessionHostPid(): Promise<number | undefined> {
    return (await (await this.client()).ready).pid
  }

  async spawnTerminal(spec: TerminalSpawnSpec): Promise<SubprocessTerminalHandle> {
    validateSpawnSpec(spec)
    throwIfAborted(spec.signal)
    // The environment the in-process provider would give: this process's, scrubbed, plus the overrides.
    const env = scrubEnvironment(process.env, spec.env, { allow: this.config.envAllow })
    // Wrapper functions do not cross the wire: wrapped here, the session host runs the wrapped argv.
    const argv = spec.wrapper ? await wrappedArgv(spec.wrapper, spec.argv) : spec.argv
    throwIfAborted(spec.signal)
    const client = await this.client()
    // Checked again after the wait: an abort meanwhile fired no listener of ours.
    throwIfAborted(spec.signal)
    let requestId: number | undefined
    const cancel = () => requestId !== undefined && client.cancel(requestId)
    spec.signal?.addEventListener('abort', cancel, { once: true })
    let terminal: RemoteTerminal | undefined
    // Attached the moment the reply is read: the terminal's output frames follow it at once.
    const attach = (result: unknown) => {
      terminal = this.attach(client, result as SpawnReply, spec.durable !== undefined, 0)
    }
    try {
      const params = {
        argv,
        cwd: spec.cwd,
        env,
        rows: spec.rows,
        cols: spec.cols,
        graceMs: spec.graceMs,
        ...(spec.limits ? { limits: spec.limits } : {}),
        ...(spec.durable ? { durable: { key: spec.durable.key, ttlMs: spec.durable.ttlMs, retainBytes: spec.durable.retainBytes } } : {}),
      }
      await client.request('spawn', params, (id) => (requestId = id), attach)
    } finally {
      spec.signal?.removeEventListener('abort', cancel)
    }
    if (!terminal) throw new SubprocessError('SPAWN_FAILED', 'the session host answered the spawn without a terminal')
    if (spec.signal?.aborted) {
      await terminal.terminate()
      throwIfAborted(spec.signal)
    }
    return terminal
  }

  /** The session host's detached durable terminals (of this user, on the socket or the `connect` target). */
  override async listDetached(): Promise<readonly DetachedTerminal[]> {
    const client = await this.client()
    return ((await client.request('list', {})) as ListResult).terminals
  }

  /**
   * Take a detached durable terminal over: its first output listener receives the bytes from
   * `replayFrom` on, then live output. `TERMINAL_ADOPTED` when another client won, `TERMINAL_NOT_FOUND`
   * when none is detached under `key`.
   */
  override async adoptTerminal(key: string): Promise<AdoptedTerminal> {
    if (typeof key !== 'string' || key === '') throw new SubprocessError('INVALID_SPEC', 'the key of the terminal to adopt must be a non-empty string')
    const client = await this.client()
    let handle: RemoteTerminal | undefined
    const reply = (await client.request('adopt', { key }, undefined, (result) => {
      const adopted = result as AdoptResult
      handle = this.attach(client, adopted, true, adopted.replayFrom)
    })) as AdoptResult
    if (!handle) throw new SubprocessError('SPAWN_FAILED', 'the session host answered the adoption without a terminal')
    return { handle, facts: reply.facts, replayFrom: reply.replayFrom }
  }

  /** A handle for a terminal the session host named in a reply, routed from this moment on. */
  private attach(client: SessionHostClient, reply: SpawnReply, durable: boolean, from: number): RemoteTerminal {
    const terminal = new RemoteTerminal({
      client,
      number: reply.terminal,
      pid: reply.pid,
      limits: reply.limits,
      ackEveryBytes: Math.max(1, Math.floor(client.windowBytes / 2)),
      report: (error) => this.ctx.logger('subprocess').warn('terminal output listener threw: %s', errorMessage(error)),
      forget: (gone) => this.terminals.delete(gone),
      durable,
      from,
    })
    client.attach(reply.terminal, terminal)
    this.terminals.add(terminal)
    return terminal
  }

  /** The shared connection, made on first use and again after a failed start or a loss. */
  private client(): Promise<SessionHostClient> {
    if (this.connection) return this.connection
    const connection = this.connect()
    this.connection = connection
    const forget = () => {
      if (this.connection === connection) this.connection = undefined
    }
    connection.then((client) => client.closed.then(forget), forget)
    return connection
  }

  private async connect(): Promise<SessionHostClient> {
    const report = (message: string) => this.ctx.logger('subprocess').warn('%s', message)
    const liveness = { livenessMs: this.config.livenessMs }
    let client: SessionHostClient
    if (this.config.connect) {
      const command = runConnectCommand(this.config.connect)
      this.stops.add(command.stop)
      client = new SessionHostClient(
        command.input,
        command.output,
        report,
        () => {
          command.stop()
          this.stops.delete(command.stop)
        },
        liveness,
      )
    } else {
      const socket = await connectLocalSessionHost({
        socketPath: this.config.socketPath ?? defaultSocketPath(),
        command: this.config.sessionHostCommand ?? sessionHostCommand(),
        idleExitMs: this.config.idleExitMs,
        startTimeoutMs: this.config.startTimeoutMs,
      })
      client = new SessionHostClient(socket, socket, report, undefined, liveness)
    }
    await client.ready
    return client
  }

  /** Terminate every non-durable terminal, hang up (the durable ones stay detached in the session host) and end a connect command. */
  private async dispose(): Promise<void> {
    const ending = [...this.terminals].filter((terminal) => !terminal.durable)
    const results = await Promise.allSettled(ending.map((terminal) => terminal.terminate()))
    const connection = this.connection
    this.connection = undefined
    await connection?.then((client) => client.close()).catch(() => undefined)
    for (const stop of this.stops) stop()
    const failures = results.flatMap((result) => (result.status === 'rejected' ? [result.reason] : []))
    if (failures.length > 0) throw new AggregateError(failures, `${failures.length} terminal(s) could not be cleaned up`)
  }
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new SubprocessError('SPAWN_ABORTED', 'terminal spawn was aborted', { cause: signal.reason })
}
