import type { Agent } from 'dsh-agent'
import { OutputBuffer } from './output'
import type { JobDetach, JobFinalStatus, JobHandle, JobInfo, JobStatus } from './types'
import { errorMessage } from 'dsh-basics'

/** Format a duration for status details: `850ms`, `4.2s`, `3m 07s`. */
export function formatElapsed(ms: number): string {
  const clamped = Math.max(0, ms)
  if (clamped < 1000) return `${Math.round(clamped)}ms`
  if (clamped < 60_000) return `${(clamped / 1000).toFixed(1)}s`
  const seconds = Math.floor(clamped / 1000)
  return `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, '0')}s`
}

/**
 * One registered job: its handle, buffered output and state machine. A job leaves `running`
 * exactly once; {@link Job.finish} reports whether this call was the one that ended it.
 */
export class Job {
  readonly output: OutputBuffer
  readonly startedAt = Date.now()
  readonly #startedClock = performance.now()
  #status: JobStatus = 'running'
  #detail: string | undefined
  #endedAt: number | undefined
  #elapsedAtEnd = 0
  #cancelReason: string | undefined
  #handle: JobHandle | undefined
  #resolveEnded!: () => void
  /** Resolves (never rejects) once the job stopped running. */
  readonly ended = new Promise<void>((resolve) => {
    this.#resolveEnded = resolve
  })

  constructor(
    readonly id: string,
    readonly kind: string,
    readonly label: string,
    /** The owning agent; changed only when the job is adopted after its owner ended (see `JobRegistry.adopt`). */
    public owner: Agent,
    readonly outputLimitBytes: number,
    /** How it may outlive its owner (`StartJobOptions.detach`), when it can. */
    readonly detach?: JobDetach,
  ) {
    this.output = new OutputBuffer(outputLimitBytes)
  }

  get status(): JobStatus {
    return this.#status
  }

  get running(): boolean {
    return this.#status === 'running'
  }

  get cancelRequested(): boolean {
    return this.#cancelReason !== undefined
  }

  get cancelReason(): string | undefined {
    return this.#cancelReason
  }

  /** Attach the handle `run` returned; the job is live from here on. */
  attach(handle: JobHandle): void {
    this.#handle = handle
  }

  /** Pull the handle's new output into the buffer; a failing reader leaves a note instead of throwing. */
  pull(): void {
    const reader = this.#handle?.readOutput
    if (!reader || !this.running) return
    try {
      const text = reader.call(this.#handle)
      if (typeof text === 'string') this.output.write(text)
    } catch (error) {
      this.output.write(`[could not read job output: ${errorMessage(error)}]\n`)
    }
  }

  /**
   * Record a cancellation request (first reason wins) and return the handle's cancel result.
   * A synchronous throw from `cancel` is rethrown and leaves the job without a pending request.
   */
  requestCancel(reason: string): unknown {
    if (!this.running || this.#cancelReason !== undefined) return undefined
    this.#cancelReason = reason
    try {
      return this.#handle?.cancel()
    } catch (error) {
      this.#cancelReason = undefined
      throw error
    }
  }

  /** Leave `running` with a final status; false when the job had already ended. */
  finish(status: JobFinalStatus, detail: string | undefined): boolean {
    if (!this.running) return false
    this.pull()
    this.#status = status
    this.#detail = detail
    this.#endedAt = Date.now()
    this.#elapsedAtEnd = performance.now() - this.#startedClock
    this.#resolveEnded()
    return true
  }

  /** The status detail: the job's own when it gave one, else a default per status. */
  // biome-ignore lint/suspicious/useGetterReturn: the switch covers every status, and tsc checks that it does
  get detail(): string {
    if (this.#detail) return this.#detail
    switch (this.#status) {
      case 'running': {
        const elapsed = `${formatElapsed(performance.now() - this.#startedClock)} elapsed`
        return this.#cancelReason ? `${elapsed}, cancellation requested (${this.#cancelReason})` : elapsed
      }
      case 'completed':
        return `finished after ${formatElapsed(this.#elapsedAtEnd)}`
      case 'failed':
        return `failed after ${formatElapsed(this.#elapsedAtEnd)}`
      case 'killed':
        return this.#cancelReason ?? 'cancelled'
    }
  }

  /** A detached snapshot. */
  info(): JobInfo {
    const info: JobInfo = {
      id: this.id,
      kind: this.kind,
      label: this.label,
      owner: this.owner,
      status: this.#status,
      detail: this.detail,
      outputLimitBytes: this.outputLimitBytes,
      cancelRequested: this.cancelRequested,
      startedAt: this.startedAt,
    }
    if (this.#endedAt !== undefined) info.endedAt = this.#endedAt
    return info
  }
}
