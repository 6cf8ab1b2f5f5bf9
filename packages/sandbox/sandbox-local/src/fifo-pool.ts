import { execFile } from 'node:child_process'
import { closeSync, constants, fstatSync, mkdtempSync, openSync, rmSync, unlinkSync } from 'node:fs'
import { join } from 'node:path'
import { SandboxError } from 'dsh-sandbox'
import { errorMessage } from 'dsh-basics'

/** FIFOs made per `mkfifo` run: one run serves this many held starts (two FIFOs each). */
const BATCH = 32

/** Below this many ready FIFOs the pool makes more in the background, off the next start's path. */
const LOW_WATER = 8

/**
 * Anonymous FIFOs held open by this process, for bwrap's `--info-fd` and `--block-fd`: the spawners
 * (node-pty, child_process) pass no descriptor beyond 0–2, so the shell that starts bwrap opens
 * them as `/proc/<this pid>/fd/<n>`, a path only a process outside every sandbox can open (each
 * sandbox has a /proc of its own). Node cannot make a pipe, so `mkfifo` makes a batch in a fresh
 * private directory under `directory` (one every sandbox hides: see hostRuntimeCover); each is
 * opened read-write (never blocking, and never at end of file while held) and unlinked at once.
 */
export class FifoPool {
  readonly #ready: number[] = []
  #filling: Promise<void> | undefined

  /**
   * @param directory where the batch directories are made; called at each batch, it may create it.
   * @param mkfifo the `mkfifo` program (coreutils).
   */
  constructor(
    private readonly directory: () => string,
    private readonly mkfifo = 'mkfifo',
  ) {}

  /** `count` FIFO descriptors, each used once; the caller closes them. Rejects with `SANDBOX_UNAVAILABLE`. */
  async take(count: number): Promise<number[]> {
    while (this.#ready.length < count) await this.#fill()
    const taken = this.#ready.splice(0, count)
    if (this.#ready.length < LOW_WATER) this.#fill().catch(() => {})
    return taken
  }

  #fill(): Promise<void> {
    this.#filling ??= this.#makeBatch().finally(() => {
      this.#filling = undefined
    })
    return this.#filling
  }

  async #makeBatch(): Promise<void> {
    let batch: string
    try {
      batch = mkdtempSync(join(this.directory(), 'sandbox-fifos-'))
    } catch (error) {
      throw unavailable(`cannot make a private directory for them (${errorMessage(error)})`, error)
    }
    try {
      const names = Array.from({ length: BATCH }, (_, index) => join(batch, String(index)))
      await new Promise<void>((resolve, reject) => {
        execFile(this.mkfifo, ['-m', '600', ...names], (error) =>
          error ? reject(unavailable(`${this.mkfifo} failed (${errorMessage(error)})`, error)) : resolve(),
        )
      })
      for (const name of names) {
        const fd = openSync(name, constants.O_RDWR | constants.O_NONBLOCK | constants.O_NOFOLLOW)
        unlinkSync(name)
        if (!fstatSync(fd).isFIFO()) {
          closeSync(fd)
          throw unavailable(`${name} is not the FIFO ${this.mkfifo} made`)
        }
        this.#ready.push(fd)
      }
    } finally {
      rmSync(batch, { recursive: true, force: true })
    }
  }
}

function unavailable(problem: string, cause?: unknown): SandboxError {
  return new SandboxError(
    'SANDBOX_UNAVAILABLE',
    `the FIFOs that hold a sandbox for its mount check: ${problem}; install coreutils' mkfifo and check /tmp`,
    cause === undefined ? undefined : { cause },
  )
}
