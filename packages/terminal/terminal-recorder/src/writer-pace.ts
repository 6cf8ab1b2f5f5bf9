import { execFile } from 'node:child_process'
import { setPriority } from 'node:os'

/** The writer thread's nice value while it keeps up (0 is normal, 19 the lowest priority). */
export const WRITER_NICE = 19

/** A recording this many bytes behind gets the writer thread normal priority, where the OS allows it. */
export const HURRY_BYTES = 4 * 1024 * 1024

/** Once every recording is at most this many bytes behind, the writer yields again. */
export const CALM_BYTES = 512 * 1024

/** How the writer thread is scheduled: only on CPU nobody else wants, or as any other thread. */
export type WriterClass = 'idle' | 'normal'

/**
 * Moves a thread between Linux's `SCHED_IDLE` and `SCHED_OTHER` classes (Node has no call for it:
 * util-linux's `chrt` does it); resolves false where that failed (no `chrt`, not allowed).
 */
export type ClassSetter = (threadId: number, writerClass: WriterClass) => Promise<boolean>

/** {@link ClassSetter} through `chrt --idle|--other -p 0 <tid>`. */
export const chrtClassSetter: ClassSetter = (threadId, writerClass) =>
  new Promise((resolve) => {
    execFile('chrt', [writerClass === 'idle' ? '--idle' : '--other', '-p', '0', String(threadId)], { timeout: 5_000 }, (error) => resolve(!error))
  })

/**
 * The writer thread's priority, one rule: it takes only the CPU the sessions leave, and when a
 * recording falls {@link HURRY_BYTES} behind, as on a machine busy with other work, it runs as a
 * normal thread until every recording is back within {@link CALM_BYTES}.
 *
 * "Only the CPU the sessions leave" is nice 19 and, where the host may come back from it (root, or
 * CAP_SYS_NICE), the `SCHED_IDLE` class: a nice-19 thread that holds a CPU keeps it for the rest of
 * its slice when a session's thread wakes there, an idle-class thread gives it up at once, so the
 * recorder does not delay the reads of a latency-bound flood. Without that right (leaving
 * `SCHED_IDLE` needs an `RLIMIT_NICE` that allows nice 0, as does raising a nice value) it stays at
 * nice 19, and a recording that falls 8 MiB behind stops with a marker.
 */
export class WriterPace {
  readonly #setClass: ClassSetter
  readonly #mayReturn: boolean
  #threadId: number | undefined
  #hurrying = false
  #refused = false
  #ended = false
  /** Class changes run in order: a hurry right after the start must not be undone by the start's change. */
  #classChanges: Promise<unknown> = Promise.resolve()

  /** `mayReturn`: the host may leave the idle class again (root by default); tests pass a setter of their own. */
  constructor(setClass: ClassSetter = chrtClassSetter, mayReturn = process.getuid?.() === 0) {
    this.#setClass = setClass
    this.#mayReturn = mayReturn
  }

  /** The writer thread's kernel thread id, once it said it (undefined off Linux). */
  get threadId(): number | undefined {
    return this.#threadId
  }

  /** True while the writer runs at normal priority. */
  get hurrying(): boolean {
    return this.#hurrying
  }

  /** Settles once every class change asked for so far was made (or failed). */
  settled(): Promise<void> {
    return this.#classChanges.then(() => undefined)
  }

  /** The writer thread told its id (it set its own nice value already). */
  started(threadId: number | undefined): void {
    // A new thread (the first, or one started after the last was lost) begins at nice 19 by itself.
    this.#threadId = threadId
    this.#hurrying = false
    this.#ended = false
    if (threadId !== undefined && this.#mayReturn) this.#changeClass('idle')
  }

  /** A recording is `pendingBytes` behind (called as bytes are queued). */
  behind(pendingBytes: number): void {
    if (this.#hurrying || this.#refused || pendingBytes < HURRY_BYTES || this.#threadId === undefined) return
    this.#hurrying = this.#renice(0)
    if (!this.#hurrying) this.#refused = true
    else if (this.#mayReturn) this.#changeClass('normal')
  }

  /** The most any recording is behind, after the writer caught up on some. */
  caughtUp(largestPendingBytes: number): void {
    if (!this.#hurrying || largestPendingBytes > CALM_BYTES) return
    this.#renice(WRITER_NICE)
    if (this.#mayReturn) this.#changeClass('idle')
    this.#hurrying = false
  }

  /** The thread is gone: no class change is made after this (its id may be another thread's one day). */
  ended(): void {
    this.#ended = true
  }

  #changeClass(writerClass: WriterClass): void {
    const threadId = this.#threadId!
    this.#classChanges = this.#classChanges.then(() => (this.#ended ? false : this.#setClass(threadId, writerClass)))
  }

  #renice(nice: number): boolean {
    try {
      setPriority(this.#threadId!, nice)
      return true
    } catch {
      return false
    }
  }
}
