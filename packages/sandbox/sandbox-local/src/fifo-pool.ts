import { execFile } from 'node:child_process'
import { closeSync, constants, fstatSync, mkdirSync, mkdtempSync, openSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { SandboxError } from 'dsh-sandbox'
import { errorMessage, removeOrphanDirectories } from 'dsh-basics'

/** Hold directories made per `mkfifo` run (two FIFOs each): one child process serves this many starts. */
const BATCH = 12

/** Below this many ready holds the pool makes more in the background, off the next start's path. */
const LOW_WATER = 3

/** The name every pool directory starts with, followed by the pid of the process that made it. */
const POOL_PREFIX = 'sandbox-fifos-'

/** A pool directory older than this whose process is gone was left by a killed host: it is removed. */
export const STALE_POOL_MS = 10 * 60_000

/** One hold's FIFOs: the paths the starting shell opens, and the host's own ends of them. */
export interface HoldFifos {
  /** The hold's private directory (0700); removing it makes every later open of its paths fail. */
  readonly directory: string
  /** The FIFO bwrap writes its init's pid to (`--info-fd`). */
  readonly infoPath: string
  /** The FIFO bwrap's init reads one byte from before the command runs (`--block-fd`). */
  readonly blockPath: string
  /** The host's end of `infoPath`, opened read-write and nonblocking. */
  readonly infoFd: number
  /** The host's end of `blockPath`, opened read-write and nonblocking. */
  readonly blockFd: number
}

/**
 * FIFOs for bwrap's `--info-fd` and `--block-fd`, one private directory per hold: the spawners
 * (node-pty, child_process) pass no descriptor beyond 0–2, so the shell that starts bwrap opens
 * them by path. They live in a private directory of this process under `directory` (one every
 * sandbox hides: see hostRuntimeCover). Node cannot make a FIFO, so one `mkfifo` run makes a
 * batch ahead of need; the host opens its ends read-write (never blocking, never at end of file
 * while held). A hold that settles removes its directory ({@link releaseHoldFifos}), so a start
 * made later with the same paths fails to open them.
 */
export class FifoPool {
  readonly #ready: HoldFifos[] = []
  #filling: Promise<void> | undefined
  #root: string | undefined
  #made = 0
  #disposed = false

  /**
   * @param directory where the pool's directory is made; called at each batch, it may create it.
   * @param mkfifo the `mkfifo` program (coreutils).
   */
  constructor(
    private readonly directory: () => string,
    private readonly mkfifo = 'mkfifo',
  ) {}

  /** One hold's FIFOs, used once; the caller settles them with {@link releaseHoldFifos}. Rejects with `SANDBOX_UNAVAILABLE`. */
  async take(): Promise<HoldFifos> {
    while (this.#ready.length === 0) await this.#fill()
    const taken = this.#ready.shift()!
    if (this.#ready.length < LOW_WATER) this.#fill().catch(() => {})
    return taken
  }

  /** Close and remove every FIFO not yet taken (the plugin unloads); a later `take` starts a new pool. */
  dispose(): void {
    this.#disposed = true
    for (const hold of this.#ready.splice(0)) releaseHoldFifos(hold)
    if (this.#root !== undefined) rmSync(this.#root, { recursive: true, force: true })
    this.#root = undefined
  }

  #fill(): Promise<void> {
    this.#disposed = false
    this.#filling ??= this.#makeBatch().finally(() => {
      this.#filling = undefined
    })
    return this.#filling
  }

  /** This pool's private directory, made (after sweeping stale ones) on the first batch. */
  #poolRoot(): string {
    if (this.#root !== undefined) return this.#root
    let parent: string
    try {
      parent = this.directory()
      sweepStalePools(parent)
      this.#root = mkdtempSync(join(parent, `${POOL_PREFIX}${process.pid}-`))
    } catch (error) {
      throw unavailable(`cannot make a private directory for them (${errorMessage(error)})`, error)
    }
    return this.#root
  }

  async #makeBatch(): Promise<void> {
    const root = this.#poolRoot()
    const directories = Array.from({ length: BATCH }, () => join(root, `hold-${this.#made++}`))
    const made: HoldFifos[] = []
    try {
      for (const directory of directories) mkdirSync(directory, { mode: 0o700 })
      const names = directories.flatMap((directory) => [join(directory, 'info'), join(directory, 'block')])
      await new Promise<void>((resolve, reject) => {
        execFile(this.mkfifo, ['-m', '600', ...names], (error) =>
          error ? reject(unavailable(`${this.mkfifo} failed (${errorMessage(error)})`, error)) : resolve(),
        )
      })
      for (const directory of directories) {
        const infoPath = join(directory, 'info')
        const blockPath = join(directory, 'block')
        const infoFd = openFifo(infoPath)
        let blockFd: number
        try {
          blockFd = openFifo(blockPath)
        } catch (error) {
          closeSync(infoFd)
          throw error
        }
        made.push({ directory, infoPath, blockPath, infoFd, blockFd })
      }
    } catch (error) {
      for (const hold of made) releaseHoldFifos(hold)
      for (const directory of directories) rmSync(directory, { recursive: true, force: true })
      throw error instanceof SandboxError ? error : unavailable(errorMessage(error), error)
    }
    // Unloaded while mkfifo ran: nothing may stay open.
    if (this.#disposed) for (const hold of made) releaseHoldFifos(hold)
    else this.#ready.push(...made)
  }
}

/** Close the host's ends that `which` names (each once only: a closed number may be reused) and remove the hold's directory. */
export function releaseHoldFifos(hold: HoldFifos, which: { info?: boolean; block?: boolean } = { info: true, block: true }): void {
  for (const fd of [which.info ? hold.infoFd : undefined, which.block ? hold.blockFd : undefined]) {
    if (fd === undefined) continue
    try {
      closeSync(fd)
    } catch {
      // Already closed.
    }
  }
  rmSync(hold.directory, { recursive: true, force: true })
}

/** Open a FIFO `mkfifo` just made, read-write and nonblocking, refusing anything else. */
function openFifo(path: string): number {
  const fd = openSync(path, constants.O_RDWR | constants.O_NONBLOCK | constants.O_NOFOLLOW)
  if (!fstatSync(fd).isFIFO()) {
    closeSync(fd)
    throw unavailable(`${path} is not a FIFO`)
  }
  return fd
}

/**
 * Remove pool directories a killed host left in `parent`: ours (same uid), older than
 * {@link STALE_POOL_MS}, and named after a pid that no longer runs. Best effort.
 */
export function sweepStalePools(parent: string, now: number = Date.now()): void {
  removeOrphanDirectories(parent, /^sandbox-fifos-(\d+)-/, STALE_POOL_MS, now)
}

function unavailable(problem: string, cause?: unknown): SandboxError {
  return new SandboxError(
    'SANDBOX_UNAVAILABLE',
    `the FIFOs that hold a sandbox for its mount check: ${problem}; install coreutils' mkfifo and check /tmp`,
    cause === undefined ? undefined : { cause },
  )
}
