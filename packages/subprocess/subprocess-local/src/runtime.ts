import type { Context } from '@deepseek-ai/cordis'
import { scrubEnvironment, SubprocessError, SubprocessRuntime, type SubprocessTerminalHandle, type TerminalSpawnSpec, validateSpawnSpec } from 'dsh-subprocess'
import { spawn } from 'node-pty'
import { stat } from 'node:fs/promises'
import { CgroupLimiter, type CgroupLimiterOptions } from './cgroup/limiter'
import type { LocalSubprocessConfig } from './config'
import { resolveExecutable } from './executable'
import type { TerminalModesSource } from './modes/modes-source'
import { TermiosModes } from './modes/termios-modes'
import { inspectorFor } from './platform'
import { LocalTerminal } from './terminal'
import { HostWatchdog, type HostWatchdogOptions } from './watchdog/watchdog'
import { errorMessage } from 'dsh-basics'

/** What a runtime is built with besides its config (tests inject cgroup layouts this host lacks). */
export interface LocalSubprocessRuntimeOptions {
  /** Where per-session limits read the cgroup layout and do their file work. */
  readonly cgroups?: CgroupLimiterOptions
  /** Where terminals read their echo/canonical flags (default: `TermiosModes`: one perl helper, or one `stty` helper shell without perl; started on first use). */
  readonly modes?: TerminalModesSource
  /** How the host-death watchdog runs (tests: another platform, a missing shell); used only with `exitCleanup`. */
  readonly watchdog?: Omit<HostWatchdogOptions, 'warn'>
}

/**
 * `ctx.subprocess` backed by node-pty on this machine. Every terminal it spawns is terminated
 * when the plugin unloads, and (by default) SIGKILLed synchronously when the host exits, or by the
 * host-death watchdog when the host is killed without running exit handlers (SIGKILL).
 * `spec.limits` are enforced with one cgroup per terminal where the host allows (see `CgroupLimiter`).
 */
export class LocalSubprocessRuntime extends SubprocessRuntime {
  private readonly config: LocalSubprocessConfig
  private readonly terminals = new Set<LocalTerminal>()
  private readonly limiter: CgroupLimiter
  private readonly modes: TerminalModesSource
  private readonly watchdog: HostWatchdog | undefined

  constructor(ctx: Context, config: LocalSubprocessConfig, options: LocalSubprocessRuntimeOptions = {}) {
    super(ctx)
    this.config = config
    const warn = (message: string) => ctx.logger('subprocess').warn('%s', message)
    this.limiter = new CgroupLimiter(options.cgroups ?? {}, warn)
    this.modes = options.modes ?? new TermiosModes()
    // Without exitCleanup sessions are meant to outlive the host, so nothing watches for its death.
    this.watchdog = config.exitCleanup ? new HostWatchdog({ ...options.watchdog, warn }) : undefined
    // Started once the plugin loaded, not on the first open: Node forks synchronously (a few ms).
    if (this.watchdog) setImmediate(() => this.watchdog?.start()).unref()
    ctx.effect(
      () => () =>
        this.terminateAll().finally(() => {
          for (const parent of this.limiter.dispose()) this.watchdog?.forgetCgroup(parent)
          // Awaited: the helpers' processes (and the watchdog, after killing what a failed teardown left) are gone when the plugin is.
          return Promise.all([this.modes.dispose(), this.watchdog?.dispose()]).then(() => {})
        }),
      'subprocess: terminate every terminal',
    )
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
    // Registered before the spawn: a host killed a moment later still takes the session's cgroups down.
    // (Normally running since the plugin loaded; this starts it when an open came first, or again after it died.)
    this.watchdog?.start()
    const { cgroup, applied } = this.limiter.open(spec.limits)
    for (const parent of this.limiter.parentDirs) this.watchdog?.watchCgroup(parent)
    // Under limits the PTY runs a launcher that joins the cgroups and then execs the program.
    const command = cgroup ? cgroup.launcher(file, args) : { file, args }
    let pty: ReturnType<typeof spawn>
    try {
      pty = spawn(command.file, command.args, { name: env.TERM ?? 'xterm-256color', cols: spec.cols, rows: spec.rows, cwd: spec.cwd, env, encoding: null })
    } catch (error) {
      await cgroup?.remove(this.config.killWaitMs)
      throw new SubprocessError('SPAWN_FAILED', `could not start ${program} in a PTY: ${errorMessage(error)}`, { cause: error })
    }
    const terminal = new LocalTerminal({
      pty,
      inspector,
      graceMs: spec.graceMs,
      killWaitMs: this.config.killWaitMs,
      backlogBytes: this.config.backlogBytes,
      exitCleanup: this.config.exitCleanup,
      report: (error) => this.ctx.logger('subprocess').warn('terminal output listener threw: %s', errorMessage(error)),
      onTerminated: (done) => {
        this.terminals.delete(done)
        this.watchdog?.forgetSession(done.pid)
      },
      otherTerminals: (self) => this.livePidsExcept(self),
      cgroup,
      limits: applied,
      modes: this.modes,
    })
    this.terminals.add(terminal)
    try {
      await terminal.settle()
    } catch (error) {
      await terminal.terminate()
      throw error
    }
    if (spec.signal?.aborted) {
      await terminal.terminate()
      throwIfAborted(spec.signal)
    }
    // Before the handle is returned nothing could have been typed into the session, so nothing escaped yet.
    this.watchdog?.watchSession(terminal.pid, terminal.started, terminal.device, cgroup !== undefined)
    // Once the shell is gone its pid, session id and PTY number may be reused by strangers: the
    // watchdog forgets it then, not only at teardown (the session's cgroups stay registered).
    void terminal.done.then(() => this.watchdog?.forgetSession(terminal.pid))
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
