import { type ChildProcessByStdio, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, unlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Socket } from 'node:net'
import type { Writable } from 'node:stream'
import { errorMessage, settledWithin } from 'dsh-basics'
import { WATCHDOG_NAME, WATCHDOG_SCRIPT, WATCHDOG_SHELL, type WatchdogLine } from './script'
import { REGISTRY_PREFIX, removeStaleRegistries } from './stale-registries'

let swept = false

/** Once per process, before its first watchdog: remove what hosts killed with their watchdogs left. */
function sweepOnce(): void {
  if (swept) return
  swept = true
  removeStaleRegistries(tmpdir())
}

/** Longest wait in {@link HostWatchdog.dispose} for the watchdog's last sweep and exit. */
export const WATCHDOG_EXIT_WAIT_MS = 5000

/** Where a watchdog runs and reports (tests point `shell` at a missing path, `platform` elsewhere). */
export interface HostWatchdogOptions {
  /** Receives each distinct problem once: why sessions would not die with a SIGKILLed host. */
  readonly warn: (message: string) => void
  /** Default `process.platform`; the watchdog reads Linux's /proc. */
  readonly platform?: NodeJS.Platform
  /** The POSIX shell that runs the script (default `/bin/sh`). */
  readonly shell?: string
  /** The pid named in the watchdog's arguments, for `ps` (default: this process). */
  readonly hostPid?: number
}

type Watchdog = ChildProcessByStdio<Writable, null, null>

/**
 * A process that outlives the host to take the host's sessions down with it. SIGKILL cannot be
 * caught, so the exit guard never runs then; the kernel does close the host's end of the
 * watchdog's stdin, which the watchdog reads as "the host is gone" and answers by killing what the
 * runtime registered (see `WATCHDOG_SCRIPT`). Started detached (a session of its own, so the host's
 * terminal and process group signals miss it) when the runtime loads; never keeps the host alive;
 * one that died is started again, with every registration, at the next spawn. Never throws.
 */
export class HostWatchdog {
  readonly #options: HostWatchdogOptions
  readonly #cgroups = new Set<string>()
  readonly #sessions = new Map<number, WatchdogLine>()
  readonly #warned = new Set<string>()
  readonly #exits = new Set<Promise<void>>()
  #child: Watchdog | undefined
  #registry: string | undefined
  /** "Forget" lines not written yet: they go after the close that caused them, in one write. */
  #forgets: WatchdogLine[] = []
  #unavailable = false
  #disposed = false

  /** Nothing starts until {@link start}. */
  constructor(options: HostWatchdogOptions) {
    this.#options = options
  }

  /** Pid of the running watchdog, if one runs (diagnostics and tests). */
  get pid(): number | undefined {
    return this.#child?.pid
  }

  /**
   * The running watchdog's registration directory (0700, under the temporary directory, which
   * sandboxes replace): a PTY's first process writes a file named by its pid, holding its start
   * identity, before it runs anything, and the watchdog reads them once the host is gone. So a host
   * killed between a fork and the `session` line it would write loses no tree. Undefined when none runs.
   */
  get registry(): string | undefined {
    return this.#child ? this.#registry : undefined
  }

  /** Start the watchdog unless it runs, cannot run here (warned once), or was disposed. */
  start(): void {
    if (this.#child || this.#unavailable || this.#disposed) return
    const platform = this.#options.platform ?? process.platform
    const shell = this.#options.shell ?? WATCHDOG_SHELL
    if (platform !== 'linux') return this.#giveUp(`the host-death watchdog reads Linux's /proc and does not run on ${platform}`)
    if (!existsSync(shell)) return this.#giveUp(`${shell}, which runs the host-death watchdog, does not exist`)
    let child: Watchdog
    let registry: string | undefined
    try {
      const hostPid = this.#options.hostPid ?? process.pid
      sweepOnce()
      registry = mkdtempSync(join(tmpdir(), `${REGISTRY_PREFIX}${hostPid}-`))
      child = spawn(shell, ['-c', WATCHDOG_SCRIPT, WATCHDOG_NAME, String(hostPid), registry], {
        stdio: ['pipe', 'ignore', 'ignore'],
        detached: true,
        cwd: '/',
        env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LC_ALL: 'C' },
      })
    } catch (error) {
      if (registry) rmSync(registry, { recursive: true, force: true })
      return this.#giveUp(`the host-death watchdog could not start: ${errorMessage(error)}`)
    }
    this.#child = child
    this.#registry = registry
    const exited = new Promise<void>((resolve) => {
      child.once('close', () => resolve())
      child.once('error', () => child.pid === undefined && resolve())
    })
    this.#exits.add(exited)
    void exited.then(() => this.#exits.delete(exited))
    child.on('error', (error) => {
      // Spawn failures (no pid) are final; anything later is followed by an exit.
      if (child.pid === undefined) this.#giveUp(`the host-death watchdog could not start: ${errorMessage(error)}`)
      this.#lost(child)
    })
    child.on('exit', (code, signal) => {
      if (this.#child === child && !this.#disposed) {
        this.#warn(`the host-death watchdog exited unexpectedly (${signal ?? `status ${code}`}); it is started again at the next spawn`)
      }
      this.#lost(child)
    })
    child.stdin.on('error', () => this.#lost(child))
    child.unref()
    ;(child.stdin as Socket).unref()
    for (const dir of this.#cgroups) this.#send(`cgroup ${dir}`)
    for (const line of this.#sessions.values()) this.#send(line)
  }

  /** Take a runtime's parent cgroup down with the host: its session cgroups are emptied and removed, then it. */
  watchCgroup(dir: string): void {
    if (this.#cgroups.has(dir) || dir.includes('\n')) return
    this.#cgroups.add(dir)
    this.#send(`cgroup ${dir}`)
  }

  /** The runtime removed this parent cgroup itself. */
  forgetCgroup(dir: string): void {
    if (this.#cgroups.delete(dir)) this.#sendLater(`uncgroup ${dir}`)
  }

  /**
   * Take a terminal's session down with the host: its top-level process `pid` (a session leader)
   * with start identity `started`, and the PTY at `pts`. `contained` says it runs in session
   * cgroups; without them a process that left both the session and the terminal escapes (warned once).
   */
  watchSession(pid: number, started: string, pts: string | undefined, contained: boolean): void {
    if (!/^\d+$/.test(started)) return
    const device = pts !== undefined && /^\/\S+$/.test(pts) ? pts : '-'
    const line: WatchdogLine = `session ${pid} ${started} ${device}`
    const earlier = this.#sessions.get(pid)
    // Registered again once its PTY is known: the watchdog keeps both lines (`unsession` drops both).
    if (earlier === line || (earlier !== undefined && device === '-')) return
    this.#sessions.set(pid, line)
    this.#send(line)
    if (earlier === undefined && !contained && this.#child) {
      this.#warn(
        'sessions without a cgroup (no limits requested, or limits not enforced here) die with a SIGKILLed host only by their ' +
          'session id and terminal: a process that left both (setsid with its stdio pointed elsewhere) survives the host',
      )
    }
  }

  /** Top-level pids of the terminals it would take down now (diagnostics and tests). */
  get sessionPids(): number[] {
    return [...this.#sessions.keys()]
  }

  /** The terminal was torn down: nothing of it is left to kill. */
  forgetSession(pid: number): void {
    if (this.#sessions.delete(pid)) this.#sendLater(`unsession ${pid}`)
    this.#unregister(pid)
  }

  /** Drop the registration file a terminal's launcher wrote (there is none when it ran no launcher). */
  #unregister(pid: number): void {
    if (this.#registry === undefined) return
    try {
      unlinkSync(join(this.#registry, String(pid)))
    } catch {
      // Never written, or the watchdog already removed its directory.
    }
  }

  /**
   * Stop watching: the watchdog's stdin closes, it kills and removes what is still registered (nothing
   * after a clean unload; survivors of a failed teardown otherwise) and exits. Resolves once it has,
   * bounded by {@link WATCHDOG_EXIT_WAIT_MS}.
   */
  dispose(): Promise<void> {
    this.#disposed = true
    this.#flush()
    this.#child?.stdin.end()
    this.#child = undefined
    const exits = [...this.#exits]
    return exits.length === 0 ? Promise.resolve() : settledWithin(Promise.all(exits), WATCHDOG_EXIT_WAIT_MS)
  }

  #send(line: WatchdogLine): void {
    // Queued forgets go first: a pid forgotten and then registered again must end up registered.
    this.#flush()
    const child = this.#child
    if (child && !child.stdin.destroyed) child.stdin.write(`${line}\n`)
  }

  /**
   * A line that only forgets: written on the next turn, after the close that caused it resolved. A
   * stale registration matters only to a host killed within that turn, and only if a stranger took
   * the terminal's PTY number in it (pids are checked against their start identity).
   */
  #sendLater(line: WatchdogLine): void {
    if (!this.#child) return
    this.#forgets.push(line)
    if (this.#forgets.length === 1) setImmediate(() => this.#flush()).unref()
  }

  #flush(): void {
    if (this.#forgets.length === 0) return
    const lines = this.#forgets.splice(0)
    const child = this.#child
    if (child && !child.stdin.destroyed) child.stdin.write(`${lines.join('\n')}\n`)
  }

  #lost(child: Watchdog): void {
    if (this.#child !== child) return
    this.#child = undefined
    // A watchdog that died never read its directory; the next one makes its own.
    if (this.#registry) rmSync(this.#registry, { recursive: true, force: true })
    this.#registry = undefined
    // A new watchdog is told only what is registered then.
    this.#forgets = []
    child.stdin.destroy()
  }

  #giveUp(reason: string): void {
    this.#unavailable = true
    this.#warn(`sessions outlive a host that is SIGKILLed: ${reason}; only the PTY's hangup remains, which nohup'd and setsid'd processes survive`)
  }

  #warn(message: string): void {
    if (this.#warned.has(message)) return
    this.#warned.add(message)
    this.#options.warn(message)
  }
}
