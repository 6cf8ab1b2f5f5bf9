import { setTimeout as sleep } from 'node:timers/promises'
import type { AppliedTerminalLimits } from 'dsh-subprocess'
import { onProcessExit } from '../exit-guard'
import { type CgroupFiles, errorCode, type HeldFile } from './files'
import { type LaunchGuard, launcherCommand, type LauncherCommand } from './launcher'

/** How a wait for the launcher's join ended. */
export type JoinOutcome = 'joined' | 'exited' | 'timeout'

/**
 * One terminal's cgroups (one directory per hierarchy), from creation to removal. The terminal
 * that runs in them owns this object: it waits for the join at spawn and removes it after teardown.
 */
export class SessionCgroup {
  /** The caps in force for the session. */
  readonly applied: AppliedTerminalLimits
  readonly #dirs: readonly string[]
  readonly #files: CgroupFiles
  readonly #warn: (message: string) => void
  #removed = false
  #joined = false
  #removal: Promise<void> | undefined
  /** `pids.current` of the session, held open from the join on (where the pids controller is one of the hierarchies). */
  #taskCounter: HeldFile | undefined

  /** Wraps directories that already exist with their limits written. */
  constructor(dirs: readonly string[], applied: AppliedTerminalLimits, files: CgroupFiles, warn: (message: string) => void) {
    this.#dirs = dirs
    this.applied = applied
    this.#files = files
    this.#warn = warn
  }

  /** The session's cgroup directories. */
  get dirs(): readonly string[] {
    return this.#dirs
  }

  /** The command that joins these cgroups and then execs `file` with `args` (registered with the watchdog of `guard` first). */
  launcher(file: string, args: readonly string[], guard?: LaunchGuard): LauncherCommand {
    return launcherCommand(
      this.#dirs.map((dir) => `${dir}/cgroup.procs`),
      file,
      args,
      guard,
    )
  }

  /**
   * Resolves once `pid` is listed in every directory (the launcher joined), `exited` resolved
   * first, or `timeoutMs` passed. Polls at once, then every millisecond for the first 50 ms (the
   * launcher joins a few ms after the spawn; a check is two small reads), then every 5 ms.
   */
  async awaitJoin(pid: number, exited: Promise<unknown>, timeoutMs: number): Promise<JoinOutcome> {
    let done = false
    void exited.then(() => {
      done = true
    })
    const start = performance.now()
    for (;;) {
      if (this.#dirs.every((dir) => this.#listed(dir, pid))) {
        this.#joined = true
        this.#holdTaskCounter()
        return 'joined'
      }
      if (done) return 'exited'
      const elapsed = performance.now() - start
      if (elapsed > timeoutMs) return 'timeout'
      await Promise.race([exited, sleep(elapsed < 50 ? 1 : 5)])
    }
  }

  /**
   * True once the top-level process was seen in every directory. It joins before it forks anything,
   * so from then on every process of the session is listed here until it exits: what teardown proves
   * quiescence with.
   */
  get joined(): boolean {
    return this.#joined
  }

  /**
   * How many tasks (threads, zombies included) the session's pids cgroup charges now: one syscall on
   * a descriptor held since the join. `undefined` without a pids hierarchy or when unreadable. 0
   * proves the session empty; 1 while the shell lives means nothing else is inside.
   */
  tasks(): number | undefined {
    const text = this.#taskCounter?.read()
    const count = text === undefined ? Number.NaN : Number.parseInt(text, 10)
    return Number.isSafeInteger(count) && count >= 0 ? count : undefined
  }

  #holdTaskCounter(): void {
    if (this.#taskCounter || !this.#files.hold) return
    for (const dir of this.#dirs) {
      this.#taskCounter = this.#files.hold(`${dir}/pids.current`)
      if (this.#taskCounter) return
    }
  }

  /**
   * The pids in the directories now (one read each; exited processes are not listed, zombies
   * included), or `undefined` when a listing cannot be read — then it proves nothing.
   */
  members(): number[] | undefined {
    const pids = new Set<number>()
    for (const dir of this.#dirs) {
      const text = this.#files.read(`${dir}/cgroup.procs`)
      if (text === undefined) return undefined
      for (const pid of parsePids(text)) pids.add(pid)
    }
    return [...pids]
  }

  /**
   * {@link remove}, after the caller moved on (teardown already proved the directories empty, so the
   * `rmdir` normally succeeds at once). Should the host exit first, its exit listener removes them
   * synchronously; the host-death watchdog and the next start's sweep cover a host that is killed.
   * Resolves when done; never rejects.
   */
  removeSoon(killWaitMs: number): Promise<void> {
    if (this.#removed) return Promise.resolve()
    this.#removal ??= new Promise<void>((resolve) => {
      const unguard = onProcessExit(() => this.#rmdirAll())
      setImmediate(() => {
        void this.remove(killWaitMs).then(() => {
          unguard()
          resolve()
        })
      }).unref()
    })
    return this.#removal
  }

  /**
   * Remove the directories once teardown made the tree quiescent. A process still inside escaped
   * the tree walk (double fork plus `setsid`, stdio pointed away from the PTY): it is SIGKILLed —
   * membership of the session's cgroup is proof enough — and waited for up to `killWaitMs`.
   * Never throws; what cannot be removed is reported and left to the next start's sweep.
   */
  async remove(killWaitMs: number): Promise<void> {
    // Teardown is over: the counter has nothing left to prove.
    this.#taskCounter?.close()
    this.#taskCounter = undefined
    if (this.#removed) return
    const deadline = performance.now() + killWaitMs
    for (let delay = 1; ; delay = Math.min(delay * 2, 20)) {
      const left = await this.#rmdirAllInBackground()
      if (left.length === 0) {
        this.#removed = true
        return
      }
      // Only a populated cgroup (EBUSY) gets better by waiting; any other refusal is final.
      const busy = left.some((failure) => failure.code === 'EBUSY')
      const members = busy ? this.#members() : []
      for (const pid of members) sendKill(pid)
      if (!busy || performance.now() > deadline) {
        const dirs = left.map((failure) => `${failure.dir}: ${failure.code}`).join(', ')
        this.#warn(
          `could not remove session cgroup ${dirs}${members.length > 0 ? ` (pids still inside: ${members.join(', ')})` : ''}; the next start sweeps it`,
        )
        return
      }
      await sleep(delay)
    }
  }

  /** The synchronous last resort on host exit: SIGKILL everything still inside. */
  killSync(): void {
    if (!this.#removed) for (const pid of this.#members()) sendKill(pid)
  }

  /** Remove what is left of the directories; returns the ones that remain, with their error code. */
  #rmdirAll(): { dir: string; code: string }[] {
    const left: { dir: string; code: string }[] = []
    for (const dir of this.#dirs) {
      try {
        this.#files.rmdir(dir)
      } catch (error) {
        if (errorCode(error) !== 'ENOENT') left.push({ dir, code: errorCode(error) })
      }
    }
    return left
  }

  /** {@link #rmdirAll} off the event loop where the filesystem can. */
  async #rmdirAllInBackground(): Promise<{ dir: string; code: string }[]> {
    const remove = this.#files.rmdirInBackground?.bind(this.#files)
    if (!remove) return this.#rmdirAll()
    const left: { dir: string; code: string }[] = []
    for (const dir of this.#dirs) {
      try {
        await remove(dir)
      } catch (error) {
        if (errorCode(error) !== 'ENOENT') left.push({ dir, code: errorCode(error) })
      }
    }
    return left
  }

  /** Pids listed in any of the directories (an unreadable listing adds none). */
  #members(): number[] {
    const pids = new Set<number>()
    for (const dir of this.#dirs) for (const pid of parsePids(this.#files.read(`${dir}/cgroup.procs`))) pids.add(pid)
    return [...pids]
  }

  #listed(dir: string, pid: number): boolean {
    return parsePids(this.#files.read(`${dir}/cgroup.procs`)).includes(pid)
  }
}

function parsePids(text: string | undefined): number[] {
  return (text ?? '').split('\n').flatMap((line) => (/^\d+$/.test(line) ? [Number(line)] : []))
}

function sendKill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL')
  } catch {
    // ESRCH: already gone.
  }
}
