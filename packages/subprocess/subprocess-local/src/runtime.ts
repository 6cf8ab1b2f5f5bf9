import type { Context } from '@deepseek-ai/cordis'
import {
  scrubEnvironment,
  SubprocessError,
  SubprocessRuntime,
  type SubprocessTerminalHandle,
  type TerminalSpawnSpec,
  validateSpawnSpec,
} from 'dsh-subprocess'
import { spawn } from 'node-pty'
import { stat } from 'node:fs/promises'
import type { LocalSubprocessConfig } from './config'
import { resolveExecutable } from './executable'
import { inspectorFor } from './platform'
import { LocalTerminal } from './terminal'

/**
 * `ctx.subprocess` backed by node-pty on this machine. Every terminal it spawns is terminated
 * when the plugin unloads, and (by default) SIGKILLed synchronously when the host exits.
 */
export class LocalSubprocessRuntime extends SubprocessRuntime {
  private readonly config: LocalSubprocessConfig
  private readonly terminals = new Set<LocalTerminal>()

  constructor(ctx: Context, config: LocalSubprocessConfig) {
    super(ctx)
    this.config = config
    ctx.effect(() => () => this.terminateAll(), 'subprocess: terminate every terminal')
  }

  async spawnTerminal(spec: TerminalSpawnSpec): Promise<SubprocessTerminalHandle> {
    validateSpawnSpec(spec)
    const inspector = inspectorFor(process.platform)
    throwIfAborted(spec.signal)
    const env = scrubEnvironment(process.env, spec.env, { allow: this.config.envAllow })
    const [program = '', ...args] = spec.argv
    // Both checks at once; a missing cwd is reported first, whatever the program lookup found.
    const [cwd, found] = await Promise.allSettled([stat(spec.cwd), resolveExecutable(program, env.PATH, spec.cwd)])
    if (cwd.status === 'rejected' || !cwd.value.isDirectory()) throw new SubprocessError('INVALID_SPEC', `cwd is not an existing directory: ${spec.cwd}`)
    if (found.status === 'rejected') throw found.reason
    const file = found.value
    throwIfAborted(spec.signal)
    let pty: ReturnType<typeof spawn>
    try {
      pty = spawn(file, args, { name: env.TERM ?? 'xterm-256color', cols: spec.cols, rows: spec.rows, cwd: spec.cwd, env, encoding: null })
    } catch (error) {
      throw new SubprocessError('SPAWN_FAILED', `could not start ${program} in a PTY: ${describe(error)}`, { cause: error })
    }
    const terminal = new LocalTerminal({
      pty,
      inspector,
      graceMs: spec.graceMs,
      killWaitMs: this.config.killWaitMs,
      backlogBytes: this.config.backlogBytes,
      exitCleanup: this.config.exitCleanup,
      report: (error) => this.ctx.logger('subprocess').warn('terminal output listener threw: %s', describe(error)),
      onTerminated: (done) => this.terminals.delete(done),
      otherTerminals: (self) => this.livePidsExcept(self),
    })
    this.terminals.add(terminal)
    await terminal.settle()
    if (spec.signal?.aborted) {
      await terminal.terminate()
      throwIfAborted(spec.signal)
    }
    return terminal
  }

  /**
   * Top-level pids of the terminals other than `self` whose exit was not reported. Such a pid names
   * our own child unless node-pty reaped it in the moment before reporting the exit and the kernel
   * reused it for an orphan reparented to us; that window is accepted (see `MemberScope.otherTerminals`).
   */
  private livePidsExcept(self: LocalTerminal): Set<number> {
    const pids = new Set<number>()
    for (const terminal of this.terminals) if (terminal !== self && terminal.exit === undefined) pids.add(terminal.pid)
    return pids
  }

  /** Terminate every live terminal; rejects with an AggregateError if any teardown failed. */
  async terminateAll(): Promise<void> {
    const results = await Promise.allSettled([...this.terminals].map((terminal) => terminal.terminate()))
    const failures = results.flatMap((result) => (result.status === 'rejected' ? [result.reason] : []))
    if (failures.length > 0) throw new AggregateError(failures, `${failures.length} terminal(s) could not be cleaned up`)
  }
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new SubprocessError('SPAWN_ABORTED', 'terminal spawn was aborted', { cause: signal.reason })
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
