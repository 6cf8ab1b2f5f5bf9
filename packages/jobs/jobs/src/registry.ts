import type { Agent } from 'dsh-agent'
import { keepUtf8Head, raceAbort } from 'dsh-basics'
import { type JobsConfig, MAX_OUTPUT_LIMIT_BYTES, MIN_OUTPUT_LIMIT_BYTES } from './config'
import { JobError } from './errors'
import { Job } from './job'
import type { JobFinalStatus, JobHandle, JobInfo, JobOutcome, JobRead, JobSettledListener, StartJobOptions } from './types'

const KIND = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/
const FINAL_STATUSES: readonly string[] = ['completed', 'failed', 'killed'] satisfies JobFinalStatus[]

/** Bytes of a caller-supplied job id echoed back in an UNKNOWN_JOB message. */
const MAX_ECHOED_ID_BYTES = 100

/** Options of a {@link JobRegistry}: the service config plus a sink for errors nobody awaits. */
export interface JobRegistryOptions extends JobsConfig {
  /** Receives cancel failures and throwing settle listeners. */
  report(error: unknown): void
}

interface OwnedJobs {
  jobs: Set<Job>
  release: () => Promise<void>
}

/**
 * The process-local job registry behind `ctx.jobs`, free of Cordis so its long-lived callbacks
 * never run through a caller's context. Owners are exact `Agent` objects.
 */
export class JobRegistry {
  readonly #options: JobRegistryOptions
  readonly #jobs = new Map<string, Job>()
  readonly #owners = new Map<Agent, OwnedJobs>()
  readonly #counters = new Map<string, number>()
  readonly #listeners = new Set<JobSettledListener>()
  /** Jobs whose owner ended while they were kept (`StartJobOptions.detach`), in detachment order. */
  readonly #detached = new Set<Job>()
  #closing: Promise<void> | undefined

  constructor(options: JobRegistryOptions) {
    this.#options = options
  }

  /**
   * Start a job and return its id `<kind>-<n>` synchronously. Throws INVALID_JOB, OWNER_ENDED,
   * JOB_LIMIT or REGISTRY_CLOSED before calling `run`; an error thrown by `run` propagates as is.
   */
  start(options: StartJobOptions): string {
    const { kind, label, owner, run } = options
    const limit = options.outputLimitBytes ?? this.#options.defaultOutputLimitBytes
    if (typeof kind !== 'string' || !KIND.test(kind)) throw new JobError('INVALID_JOB', `job kind ${JSON.stringify(kind)} must match ${KIND.source}`)
    if (typeof label !== 'string') throw new JobError('INVALID_JOB', 'job label must be a string')
    if (typeof run !== 'function') throw new JobError('INVALID_JOB', 'job needs a run function')
    if (typeof owner?.own !== 'function') throw new JobError('INVALID_JOB', 'job owner must be an Agent')
    if (!Number.isInteger(limit) || limit < MIN_OUTPUT_LIMIT_BYTES || limit > MAX_OUTPUT_LIMIT_BYTES) {
      throw new JobError('INVALID_JOB', `outputLimitBytes must be an integer from ${MIN_OUTPUT_LIMIT_BYTES} to ${MAX_OUTPUT_LIMIT_BYTES}, got ${limit}`)
    }
    if (this.#closing) throw new JobError('REGISTRY_CLOSED', 'the job registry has stopped')
    if (!owner.live) throw new JobError('OWNER_ENDED', `agent ${owner.id} has ended and cannot start jobs`)
    const active = this.#active(owner)
    const max = this.#options.maxActiveJobsPerOwner
    if (active >= max) {
      throw new JobError('JOB_LIMIT', `agent ${owner.id} already has ${active} running jobs (limit ${max}); wait for one to finish or kill one with job_kill`)
    }

    const n = (this.#counters.get(kind) ?? 0) + 1
    this.#counters.set(kind, n)
    const id = `${kind}-${n}`
    const detach = options.detach
    if (detach !== undefined && (typeof detach?.key !== 'string' || detach.key === '' || typeof detach.keep !== 'function')) {
      throw new JobError('INVALID_JOB', 'job detach needs a non-empty key and a keep function')
    }
    const job = new Job(id, kind, label, owner, limit, detach)
    const handle = run({
      id,
      write: (text: string) => {
        if (typeof text === 'string') job.output.write(text)
      },
    })
    if (!isHandle(handle)) {
      this.#cancelQuietly(() => (handle as Partial<JobHandle> | undefined)?.cancel?.())
      throw new JobError('INVALID_JOB', `run() of job ${id} must return {cancel, done[, readOutput]}`)
    }
    job.attach(handle)
    let owned: OwnedJobs
    try {
      owned = this.#ownedBy(owner)
    } catch {
      this.#cancelQuietly(() => handle.cancel())
      // Nobody will read this job, so its end must not surface as an unhandled rejection.
      Promise.resolve(handle.done).then(undefined, () => {})
      throw new JobError('OWNER_ENDED', `agent ${owner.id} ended while job ${id} was starting`)
    }
    this.#jobs.set(id, job)
    owned.jobs.add(job)
    Promise.resolve(handle.done).then(
      (outcome) => this.#completed(job, outcome),
      (error: unknown) => this.#failed(job, error),
    )
    return id
  }

  /** The owner's job `id`, or undefined (also for another owner's id). */
  get(id: string, owner: Agent): JobInfo | undefined {
    return this.#find(id, owner)?.info()
  }

  /** The owner's jobs in start order (running and retained finished ones). */
  list(owner: Agent): JobInfo[] {
    return [...(this.#owners.get(owner)?.jobs ?? [])].map((job) => job.info())
  }

  /** Take the owner's job output since the previous read (tail within the bound). Throws UNKNOWN_JOB. */
  read(id: string, owner: Agent): JobRead {
    const job = this.#require(id, owner)
    job.pull()
    const { text, truncated } = job.output.take()
    return { job: job.info(), output: text, truncated }
  }

  /**
   * Request cancellation of the owner's job (idempotent; a finished job is left alone) and return
   * its snapshot. Throws UNKNOWN_JOB, or what the job's `cancel` throws synchronously.
   */
  kill(id: string, owner: Agent, reason = 'cancelled on request'): JobInfo {
    const job = this.#require(id, owner)
    this.#watch(job.requestCancel(reason))
    return job.info()
  }

  /** Wait until the owner's job stops running or `signal` aborts; resolves with its snapshot. */
  async wait(id: string, owner: Agent, signal?: AbortSignal): Promise<JobInfo> {
    const job = this.#require(id, owner)
    // An abort ends the wait, not the job: the snapshot then says it is still running.
    if (job.running) await raceAbort(job.ended, signal).catch(() => undefined)
    return job.info()
  }

  /**
   * Take over, for `owner`, every job detached under `key` (its owner ended while it was kept), in
   * start order: they are the owner's from now on, running or finished since. Throws OWNER_ENDED.
   */
  adopt(key: string, owner: Agent): JobInfo[] {
    if (this.#closing) throw new JobError('REGISTRY_CLOSED', 'the job registry has stopped')
    if (!owner?.live) throw new JobError('OWNER_ENDED', `agent ${owner?.id} has ended and cannot adopt jobs`)
    const taken = [...this.#detached].filter((job) => job.detach?.key === key)
    if (taken.length === 0) return []
    const owned = this.#ownedBy(owner)
    for (const job of taken) {
      this.#detached.delete(job)
      job.owner = owner
      owned.jobs.add(job)
    }
    this.#evictFinished(owner)
    return taken.map((job) => job.info())
  }

  /** Call `listener` once for every job that stops running; returns the unsubscribe function. */
  subscribe(listener: JobSettledListener): () => void {
    const entry: JobSettledListener = (info) => listener(info)
    this.#listeners.add(entry)
    return () => void this.#listeners.delete(entry)
  }

  /** Cancel every job, await them all, and refuse new ones. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.#cancelAndAwait([...this.#jobs.values()], 'cancelled because the job registry stopped')
      const owners = [...this.#owners.values()]
      this.#owners.clear()
      this.#detached.clear()
      this.#jobs.clear()
      this.#listeners.clear()
      await Promise.allSettled(owners.map((owned) => owned.release()))
    })()
    return this.#closing
  }

  #active(owner: Agent): number {
    let count = 0
    for (const job of this.#owners.get(owner)?.jobs ?? []) if (job.running) count++
    return count
  }

  #find(id: string, owner: Agent): Job | undefined {
    const job = typeof id === 'string' ? this.#jobs.get(id) : undefined
    return job && job.owner === owner ? job : undefined
  }

  #require(id: string, owner: Agent): Job {
    const job = this.#find(id, owner)
    if (!job) throw new JobError('UNKNOWN_JOB', `unknown job ${keepUtf8Head(String(id), MAX_ECHOED_ID_BYTES)}`)
    return job
  }

  /** The owner's job set; the first job hooks the owner's disposal (cancel and await its jobs). */
  #ownedBy(owner: Agent): OwnedJobs {
    let owned = this.#owners.get(owner)
    if (owned) return owned
    const release = owner.own(() => this.#ownerEnded(owner), 'jobs: cancel and await owned jobs')
    owned = { jobs: new Set(), release }
    this.#owners.set(owner, owned)
    return owned
  }

  async #ownerEnded(owner: Agent): Promise<void> {
    const owned = this.#owners.get(owner)
    if (!owned) return
    // A running job whose work is kept for another agent stays, detached; every other one is cancelled.
    const kept = [...owned.jobs].filter((job) => job.running && this.#keeps(job))
    for (const job of kept) {
      owned.jobs.delete(job)
      this.#detached.add(job)
    }
    this.#evictDetached()
    await this.#cancelAndAwait([...owned.jobs], 'cancelled because its owner ended')
    if (this.#owners.get(owner) !== owned) return
    this.#owners.delete(owner)
    for (const job of owned.jobs) this.#jobs.delete(job.id)
  }

  #keeps(job: Job): boolean {
    try {
      return job.detach?.keep() === true
    } catch (error) {
      this.#options.report(error)
      return false
    }
  }

  /** Forget detached jobs that finished beyond `maxFinishedJobsPerOwner` (the oldest first): nobody may adopt them. */
  #evictDetached(): void {
    const finished = [...this.#detached].filter((job) => !job.running)
    for (const job of finished.slice(0, Math.max(0, finished.length - this.#options.maxFinishedJobsPerOwner))) {
      this.#detached.delete(job)
      this.#jobs.delete(job.id)
    }
  }

  async #cancelAndAwait(jobs: Job[], reason: string): Promise<void> {
    for (const job of jobs) this.#cancelQuietly(() => job.requestCancel(reason))
    await Promise.all(jobs.map((job) => job.ended))
  }

  #cancelQuietly(cancel: () => unknown): void {
    try {
      this.#watch(cancel())
    } catch (error) {
      this.#options.report(error)
    }
  }

  /** Report the rejection of an async cancel; nobody else awaits it. */
  #watch(result: unknown): void {
    const then = (result as PromiseLike<unknown> | null | undefined)?.then
    if (typeof then === 'function') then.call(result, undefined, (error: unknown) => this.#options.report(error))
  }

  #completed(job: Job, outcome: JobOutcome | void): void {
    const given = typeof outcome === 'object' && outcome !== null ? outcome : {}
    const status = FINAL_STATUSES.includes(given.status as string) ? given.status! : job.cancelRequested ? 'killed' : 'completed'
    const detail = typeof given.detail === 'string' && given.detail ? given.detail : undefined
    this.#finish(job, status, detail)
  }

  #failed(job: Job, error: unknown): void {
    if (job.cancelRequested) return this.#finish(job, 'killed', undefined)
    const message = error instanceof Error ? error.message || error.name : String(error)
    this.#finish(job, 'failed', message || undefined)
  }

  #finish(job: Job, status: JobFinalStatus, detail: string | undefined): void {
    if (!job.finish(status, detail)) return
    if (this.#detached.has(job)) this.#evictDetached()
    else this.#evictFinished(job.owner)
    const info = job.info()
    for (const listener of [...this.#listeners]) {
      try {
        listener(info)
      } catch (error) {
        this.#options.report(error)
      }
    }
  }

  #evictFinished(owner: Agent): void {
    const owned = this.#owners.get(owner)
    if (!owned) return
    const finished = [...owned.jobs].filter((job) => !job.running)
    for (const job of finished.slice(0, Math.max(0, finished.length - this.#options.maxFinishedJobsPerOwner))) {
      owned.jobs.delete(job)
      this.#jobs.delete(job.id)
    }
  }
}

function isHandle(value: unknown): value is JobHandle {
  const handle = value as Partial<JobHandle> | null | undefined
  return (
    typeof handle?.cancel === 'function' &&
    typeof (handle.done as PromiseLike<unknown> | undefined)?.then === 'function' &&
    (handle.readOutput === undefined || typeof handle.readOutput === 'function')
  )
}
