import { setTimeout as sleep } from 'node:timers/promises'
import type { AppliedTerminalLimits } from 'dsh-subprocess'
import { type CgroupFiles, errorCode } from './files'
import { launcherCommand, type LauncherCommand } from './launcher'

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

  /** The command that joins these cgroups and then execs `file` with `args`. */
  launcher(file: string, args: readonly string[]): LauncherCommand {
    return launcherCommand(
      this.#dirs.map((dir) => `${dir}/cgroup.procs`),
      file,
      args,
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
      if (this.#dirs.every((dir) => this.#listed(dir, pid))) return 'joined'
      if (done) return 'exited'
      const elapsed = performance.now() - start
      if (elapsed > timeoutMs) return 'timeout'
      await Promise.race([exited, sleep(elapsed < 50 ? 1 : 5)])
    }
  }

  /**
   * Remove the directories once teardown made the tree quiescent. A process still inside escaped
   * the tree walk (double fork plus `setsid`, stdio pointed away from the PTY): it is SIGKILLed —
   * membership of the session's cgroup is proof enough — and waited for up to `killWaitMs`.
   * Never throws; what cannot be removed is reported and left to the next start's sweep.
   */
  async remove(killWaitMs: number): Promise<void> {
    if (this.#removed) return
    const deadline = performance.now() + killWaitMs
    for (let delay = 1; ; delay = Math.min(delay * 2, 20)) {
      const left = this.#rmdirAll()
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

  /** Pids listed in any of the directories. */
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
