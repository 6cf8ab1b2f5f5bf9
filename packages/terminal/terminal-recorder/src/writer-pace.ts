import { setPriority } from 'node:os'

/** The writer thread's nice value while it keeps up (0 is normal, 19 the lowest priority). */
export const WRITER_NICE = 19

/** A recording this many bytes behind gets the writer thread normal priority, where the OS allows it. */
export const HURRY_BYTES = 4 * 1024 * 1024

/** Once every recording is at most this many bytes behind, the writer yields again. */
export const CALM_BYTES = 512 * 1024

/**
 * The writer thread's priority, one rule: it takes only the CPU the sessions leave (nice 19), and
 * when a recording falls {@link HURRY_BYTES} behind, as on a machine busy with other work, it runs at
 * normal priority until every recording is back within {@link CALM_BYTES}. Raising a thread's
 * priority needs root or an RLIMIT_NICE that allows it; elsewhere it stays at 19 (and a recording
 * that falls 8 MiB behind stops with a marker).
 */
export class WriterPace {
  #threadId: number | undefined
  #hurrying = false
  #refused = false

  /** The writer thread's kernel thread id, once it said it (undefined off Linux). */
  get threadId(): number | undefined {
    return this.#threadId
  }

  /** True while the writer runs at normal priority. */
  get hurrying(): boolean {
    return this.#hurrying
  }

  /** The writer thread told its id. */
  started(threadId: number | undefined): void {
    this.#threadId = threadId
  }

  /** A recording is `pendingBytes` behind (called as bytes are queued). */
  behind(pendingBytes: number): void {
    if (this.#hurrying || this.#refused || pendingBytes < HURRY_BYTES || this.#threadId === undefined) return
    this.#hurrying = this.#renice(0)
    if (!this.#hurrying) this.#refused = true
  }

  /** The most any recording is behind, after the writer caught up on some. */
  caughtUp(largestPendingBytes: number): void {
    if (!this.#hurrying || largestPendingBytes > CALM_BYTES) return
    this.#renice(WRITER_NICE)
    this.#hurrying = false
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
