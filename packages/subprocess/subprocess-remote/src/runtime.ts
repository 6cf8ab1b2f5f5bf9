import type { Context } from '@deepseek-ai/cordis'
import {
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
import { connectLocalSessionHost, defaultSocketPath, sessionHostCommand } from 'dsh-session-host'
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
      const reply = result as SpawnReply
      terminal = new RemoteTerminal({
        client,
        number: reply.terminal,
        pid: reply.pid,
        limits: reply.limits,
        ackEveryBytes: Math.max(1, Math.floor(client.windowBytes / 2)),
        report: (error) => this.ctx.logger('subprocess').warn('terminal output listener threw: %s', errorMessage(error)),
        forget: (gone) => this.terminals.delete(gone),
      })
      client.attach(reply.terminal, terminal)
      this.terminals.add(terminal)
    }
    try {
      const params = { argv, cwd: spec.cwd, env, rows: spec.rows, cols: spec.cols, graceMs: spec.graceMs, ...(spec.limits ? { limits: spec.limits } : {}) }
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
    let client: SessionHostClient
    if (this.config.connect) {
      const command = runConnectCommand(this.config.connect)
      this.stops.add(command.stop)
      client = new SessionHostClient(command.input, command.output, report, () => {
        command.stop()
        this.stops.delete(command.stop)
      })
    } else {
      const socket = await connectLocalSessionHost({
        socketPath: this.config.socketPath ?? defaultSocketPath(),
        command: this.config.sessionHostCommand ?? sessionHostCommand(),
        idleExitMs: this.config.idleExitMs,
        startTimeoutMs: this.config.startTimeoutMs,
      })
      client = new SessionHostClient(socket, socket, report)
    }
    await client.ready
    return client
  }

  /** Terminate every terminal, hang up and end a connect command. */
  private async dispose(): Promise<void> {
    const results = await Promise.allSettled([...this.terminals].map((terminal) => terminal.terminate()))
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
