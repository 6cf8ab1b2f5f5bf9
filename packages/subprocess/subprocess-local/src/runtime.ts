import type { Context } from '@deepseek-ai/cordis'
import {
  type AppliedTerminalLimits,
  LOCAL_TARGET,
  scrubEnvironment,
  type SpawnWrapper,
  SubprocessError,
  SubprocessRuntime,
  type SubprocessTerminalHandle,
  type TerminalLimits,
  type TerminalSpawnSpec,
  validateSpawnSpec,
  wrappedArgv,
} from 'dsh-subprocess'
import { type IPty, spawn } from 'node-pty'
import { CgroupLimiter, type CgroupLimiterOptions } from './cgroup/limiter'
import { LAUNCHER_SHELL, type LaunchGuard, launcherCommand } from './cgroup/launcher'
import type { SessionCgroup } from './cgroup/session'
import type { LocalSubprocessConfig } from './config'
import { isDirectory, resolveExecutable } from './executable'
import type { TerminalModesSource } from './modes/modes-source'
import { TermiosModes } from './modes/termios-modes'
import type { ProcessInspector } from './inspector'
import { inspectorFor } from './platform'
import { LocalTerminal } from './terminal'
import { launchFrame, ptyEnvironment, WARM_LAUNCH_ARCHES, WARM_LAUNCHER_ARGS, WARM_PERL_PATH } from './warm/launcher-script'
import { LauncherPrelude } from './warm/prelude'
import { type WarmLauncher, WarmLaunchers } from './warm/warm-launchers'
import { HostWatchdog, type HostWatchdogOptions } from './watchdog/watchdog'
import { errorMessage, withTimeout } from 'dsh-basics'

/** Longest wait for a warm launcher to say it is ready (it joined long before); beyond it, it is dropped. */
const WARM_READY_TIMEOUT_MS = 5000

/**
 * What a launcher inside a wrapper runs the program with: a shell that execs it. With the launcher's
 * own join shell before it, the environment passes the same two shells as in a cold wrapped spawn
 * (the join launcher, then the wrapper's opener), so it reaches the program in the same order.
 */
const WRAPPED_EXEC_ARGS: readonly string[] = ['-c', 'exec "$@"', 'sh']

/** Teardown grace of a warm launcher that never got a program (it waits in a read: SIGHUP ends it). */
const WARM_GRACE_MS = 1000

/** A terminal as the runtime hands it out, and whether it runs in session cgroups. */
interface Started {
  readonly terminal: LocalTerminal
  readonly contained: boolean
}

/** What a runtime is built with besides its config (tests inject cgroup layouts this host lacks). */
export interface LocalSubprocessRuntimeOptions {
  /** Where per-session limits read the cgroup layout and do their file work. */
  readonly cgroups?: CgroupLimiterOptions
  /** Where terminals read their echo/canonical flags (default: `TermiosModes`: one perl helper, or one `stty` helper shell without perl; started on first use). */
  readonly modes?: TerminalModesSource
  /** How the host-death watchdog runs (tests: another platform, a missing shell); used only with `exitCleanup`. */
  readonly watchdog?: Omit<HostWatchdogOptions, 'warn'>
  /** How terminals look at their processes (default: this platform's inspector); tests take proofs away to run as on macOS. */
  readonly inspector?: ProcessInspector
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
  private readonly warm: WarmLaunchers | undefined
  /** The perl warm launchers run (null: none on this host); looked up once. */
  private perl: string | null | undefined
  private readonly options: LocalSubprocessRuntimeOptions

  constructor(ctx: Context, config: LocalSubprocessConfig, options: LocalSubprocessRuntimeOptions = {}) {
    super(ctx)
    this.config = config
    this.options = options
    const warn = (message: string) => ctx.logger('subprocess').warn('%s', message)
    this.limiter = new CgroupLimiter(options.cgroups ?? {}, warn)
    this.modes = options.modes ?? new TermiosModes()
    // Without exitCleanup sessions are meant to outlive the host, so nothing watches for its death.
    this.watchdog = config.exitCleanup ? new HostWatchdog({ ...options.watchdog, warn }) : undefined
    // Started once the plugin loaded, not on the first open: Node forks synchronously (a few ms).
    if (this.watchdog) setImmediate(() => this.watchdog?.start()).unref()
    this.warm = config.warmLaunch ? new WarmLaunchers((limits, wrapper) => this.startWarm(limits, wrapper)) : undefined
    ctx.effect(
      () => () => {
        // Stopped first, so no launcher starts after the terminals were counted; its wait ends as they are terminated.
        const warm = this.warm?.dispose()
        return this.terminateAll().finally(async () => {
          await warm
          for (const parent of this.limiter.dispose()) this.watchdog?.forgetCgroup(parent)
          // Awaited: the helpers' processes (and the watchdog, after killing what a failed teardown left) are gone when the plugin is.
          return Promise.all([this.modes.dispose(), this.watchdog?.dispose()]).then(() => {})
        })
      },
      'subprocess: terminate every terminal',
    )
  }

  /** Pids of the warm launchers waiting for a limited spawn now (diagnostics and tests; see `warmLaunch`). */
  get warmPids(): number[] {
    return this.warm?.pids ?? []
  }

  /** Pids of the launchers waiting inside a wrapper (of key `key`, when given; diagnostics and tests; see `spec.wrapper`). */
  warmWrappedPids(key?: string): number[] {
    return this.warm?.wrappedPids(key) ?? []
  }

  async spawnTerminal(spec: TerminalSpawnSpec): Promise<SubprocessTerminalHandle> {
    validateSpawnSpec(spec)
    // Its terminals live in this process and end with it: it cannot honour a terminal that outlives its client.
    if (spec.durable !== undefined) {
      throw new SubprocessError(
        'INVALID_SPEC',
        'dsh-subprocess-local cannot keep a durable terminal (it ends with this process); mount dsh-subprocess-remote for durable terminals',
      )
    }
    if (spec.envFiles !== undefined) {
      throw new SubprocessError(
        'INVALID_SPEC',
        'dsh-subprocess-local does not write envFiles (startup files for a terminal on another machine); pass a path in env, or mount dsh-subprocess-remote, whose session host writes them',
      )
    }
    if (spec.target !== undefined && spec.target !== LOCAL_TARGET) {
      throw new SubprocessError(
        'UNKNOWN_TARGET',
        `dsh-subprocess-local runs terminals only on this machine (target "${LOCAL_TARGET}"), not on "${spec.target}"; mount dsh-subprocess-remote with targets to run them elsewhere`,
      )
    }
    // Refuses a platform without an inspector before anything starts.
    inspectorFor(process.platform)
    throwIfAborted(spec.signal)
    const env = scrubEnvironment(process.env, spec.env, { allow: this.config.envAllow })
    // A missing cwd is reported first, whatever the program lookup would find.
    if (!isDirectory(spec.cwd)) throw new SubprocessError('INVALID_SPEC', `cwd is not an existing directory: ${spec.cwd}`)
    // Registered before the spawn: a host killed a moment later still takes the session's cgroups down.
    // (Normally running since the plugin loaded; this starts it when an open came first, or again after it died.)
    this.watchdog?.start()
    const name = env.TERM ?? 'xterm-256color'
    const { terminal, contained } = this.launchWrapped(spec, env, name) ?? (await this.startUnwrapped(spec, env, name))
    if (spec.signal?.aborted) {
      await terminal.terminate()
      throwIfAborted(spec.signal)
    }
    // Before the handle is returned nothing could have been typed into the session, so nothing escaped yet.
    this.watchdog?.watchSession(terminal.pid, terminal.started, terminal.device, contained)
    // Once the shell is gone its pid, session id and PTY number may be reused by strangers: the
    // watchdog forgets it then, not only at teardown (the session's cgroups stay registered).
    void terminal.done.then(() => this.watchdog?.forgetSession(terminal.pid))
    // The next spawn under these limits finds a launcher waiting (the first one, or the one just taken, is replaced).
    if (spec.limits) {
      this.warm?.refill(spec.limits, spec.wrapper)
      // A wrapped spawn that went cold used a plain launcher: the next cold one finds another.
      if (spec.wrapper) this.warm?.refill(spec.limits)
    }
    return terminal
  }

  /** A spawn of `spec.argv` (wrapped now, when a wrapper is given): in a warm launcher when one waits, else cold. */
  private async startUnwrapped(spec: TerminalSpawnSpec, env: Record<string, string>, name: string): Promise<Started> {
    const argv = spec.wrapper ? await wrappedArgv(spec.wrapper, spec.argv) : spec.argv
    throwIfAborted(spec.signal)
    const [program = '', ...args] = argv
    const file = resolveExecutable(program, env.PATH, spec.cwd)
    return this.launchWarm(spec, file, args, env, name) ?? (await this.spawnCold(spec, program, file, args, env, name))
  }

  /**
   * Start `spec.argv` in a launcher waiting inside a wrapper of the same key started ahead (a warm
   * sandbox), when one is ready and still current. The frame runs it through the same shells a cold
   * wrapped spawn passes (see {@link WRAPPED_EXEC_ARGS}), so it gets what a cold one gets.
   */
  private launchWrapped(spec: TerminalSpawnSpec, env: Record<string, string>, name: string): Started | undefined {
    if (!this.warm || !spec.limits || !spec.wrapper) return undefined
    const terminal = this.warm.take(spec.limits, spec.wrapper)
    if (!terminal) return undefined
    const last = launcherCommand([], LAUNCHER_SHELL, [...WRAPPED_EXEC_ARGS, ...spec.argv])
    terminal.launch(launchFrame(spec.cwd, last.file, last.args, ptyEnvironment(env, spec.cwd, name)), spec.rows, spec.cols, spec.graceMs)
    return { terminal, contained: true }
  }

  /** What a PTY's first process registers itself with before it runs the program (none without a running watchdog). */
  private launchGuard(): LaunchGuard | undefined {
    const registry = this.watchdog?.registry
    return registry === undefined ? undefined : { registry, hostPid: process.pid }
  }

  /** Spawn the program in a new PTY: under limits through the join launcher, resolved once it joined. */
  private async spawnCold(spec: TerminalSpawnSpec, program: string, file: string, args: string[], env: Record<string, string>, name: string): Promise<Started> {
    const { cgroup, applied } = this.limiter.open(spec.limits)
    for (const parent of this.limiter.parentDirs) this.watchdog?.watchCgroup(parent)
    // The PTY runs a launcher that closes what the host leaked into it, joins the cgroups (under
    // limits) and then execs the program.
    const guard = this.launchGuard()
    const command = cgroup ? cgroup.launcher(file, args, guard) : launcherCommand([], file, args, guard)
    let pty: IPty
    try {
      pty = spawn(command.file, command.args, { name, cols: spec.cols, rows: spec.rows, cwd: spec.cwd, env, encoding: null })
    } catch (error) {
      await cgroup?.remove(this.config.killWaitMs)
      throw new SubprocessError('SPAWN_FAILED', `could not start ${program} in a PTY: ${errorMessage(error)}`, { cause: error })
    }
    const terminal = this.track(pty, spec.graceMs, cgroup, applied)
    // Known to the host-death watchdog in the turn that forked it (where the identity reads at once),
    // not after an await: a session host handling a burst of spawns forks them all in one turn, and
    // one killed then must still take every forked tree down by its session id.
    const watch = () => this.watchdog?.watchSession(terminal.pid, terminal.started, undefined, cgroup !== undefined)
    if (terminal.identifyNow()) watch()
    try {
      await terminal.settle(watch)
    } catch (error) {
      await terminal.terminate()
      this.watchdog?.forgetSession(terminal.pid)
      throw error
    }
    return { terminal, contained: cgroup !== undefined }
  }

  /**
   * Start the program in the warm launcher kept for these limits, if one is ready (it joined the
   * session's cgroups in the background). The program gets exactly
   * what {@link spawnCold} would give it: argv, cwd, size, and the environment node-pty would pass.
   */
  private launchWarm(spec: TerminalSpawnSpec, file: string, args: string[], env: Record<string, string>, name: string): Started | undefined {
    if (!this.warm || !spec.limits) return undefined
    const terminal = this.warm.take(spec.limits)
    if (!terminal) return undefined
    // The last step is the join launcher of a cold spawn with nothing left to join: its shell hands the
    // program the environment in the very order a cold spawn's launcher does.
    const last = launcherCommand([], file, args)
    terminal.launch(launchFrame(spec.cwd, last.file, last.args, ptyEnvironment(env, spec.cwd, name)), spec.rows, spec.cols, spec.graceMs)
    return { terminal, contained: true }
  }

  /**
   * One warm launcher under `limits`: the join launcher, then perl waiting for its frame on the PTY
   * (see `WARM_LAUNCHER_ARGS`), resolved once it joined and said it is ready. `undefined` where
   * none can be made (another architecture, no perl, no cgroups for these limits, a failed join or start).
   */
  private async startWarm(limits: TerminalLimits, wrapper: SpawnWrapper | undefined): Promise<WarmLauncher | 'later' | undefined> {
    if (!WARM_LAUNCH_ARCHES.includes(process.arch)) return undefined
    if (this.perl === undefined) this.perl = findProgram('perl', WARM_PERL_PATH)
    const perl = this.perl
    if (!perl) return undefined
    if (wrapper && !wrapper.wrapAhead) return undefined
    // Inside a wrapper the launcher is wrapped ahead (a sandbox started now); `undefined` from it means not now.
    const ahead = wrapper ? await wrapper.wrapAhead!([perl, ...WARM_LAUNCHER_ARGS]) : undefined
    if (wrapper && !ahead) return 'later'
    const [file = perl, ...args] = ahead ? ahead.argv : [perl, ...WARM_LAUNCHER_ARGS]
    if (ahead && !ahead.argv[0]?.startsWith('/')) return undefined
    const { cgroup, applied } = this.limiter.open(limits)
    if (!cgroup) return undefined
    for (const parent of this.limiter.parentDirs) this.watchdog?.watchCgroup(parent)
    const command = cgroup.launcher(file, args)
    let pty: IPty
    try {
      pty = spawn(command.file, command.args, { name: 'xterm-256color', cols: 80, rows: 24, cwd: '/', env: {}, encoding: null })
    } catch {
      await cgroup.remove(this.config.killWaitMs)
      return undefined
    }
    const prelude = new LauncherPrelude()
    const terminal = this.track(pty, WARM_GRACE_MS, cgroup, applied, prelude)
    const ready = await terminal
      .settle()
      .then(() => withTimeout(prelude.ready, WARM_READY_TIMEOUT_MS, () => false))
      .catch(() => false)
    if (ready && terminal.launchable) return ahead ? { terminal, current: () => ahead.current(), expired: ahead.expired } : { terminal }
    await terminal.terminate().catch(() => undefined)
    return undefined
  }

  /** Wrap a spawned PTY as a terminal of this runtime. */
  private track(pty: IPty, graceMs: number, cgroup: SessionCgroup | undefined, limits: AppliedTerminalLimits, prelude?: LauncherPrelude): LocalTerminal {
    const terminal = new LocalTerminal({
      pty,
      inspector: this.options.inspector ?? inspectorFor(process.platform),
      graceMs,
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
      limits,
      modes: this.modes,
      prelude,
    })
    this.terminals.add(terminal)
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

/** `name` on `path`, or null when it is not there. */
function findProgram(name: string, path: string): string | null {
  try {
    return resolveExecutable(name, path, '/')
  } catch {
    return null
  }
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new SubprocessError('SPAWN_ABORTED', 'terminal spawn was aborted', { cause: signal.reason })
}
