import type { Agent } from 'dsh-agent'

/** Where a job is: `running` until its `done` settles, then one of the three final states. */
export type JobStatus = 'running' | 'completed' | 'failed' | 'killed'

/** The final states a job's `done` may report explicitly. */
export type JobFinalStatus = Exclude<JobStatus, 'running'>

/** What `run` receives: the job's id and a sink for output the registry buffers (tail kept). */
export interface JobContext {
  id: string
  /** Append output; the registry keeps at most `outputLimitBytes` of unread text, the tail. */
  write(text: string): void
}

/**
 * What `done` may resolve with. Without `status` a job is `completed`, or `killed` when its
 * cancellation was requested; `detail` replaces the default status detail.
 */
export interface JobOutcome {
  status?: JobFinalStatus
  detail?: string
}

/** What `run` returns: how to cancel the job, when it ends, and optionally how to pull output. */
export interface JobHandle {
  /** Request cancellation; `done` must settle afterwards (owner disposal awaits it). */
  cancel(): void | Promise<void>
  /** Settles when the job ends; a rejection is recorded as status `failed` and never escapes. */
  done: PromiseLike<JobOutcome | void>
  /** Output produced since the previous call (a delta); pulled on each read and once at the end. */
  readOutput?(): string
}

/** Arguments of `ctx.jobs.start`. */
export interface StartJobOptions {
  /** Id prefix, `[A-Za-z][A-Za-z0-9_-]*` up to 64 chars: ids are `<kind>-<n>`, counted per kind. */
  kind: string
  /** One-line human description, e.g. `pty-1: make test`. */
  label: string
  /** The exact agent that owns the job; only it can see, read or kill the job. */
  owner: Agent
  /** Byte bound of buffered unread output (tail kept) and of a rendered read; config default. */
  outputLimitBytes?: number
  /** Start the job; called once, synchronously. If it throws, nothing is registered. */
  run(job: JobContext): JobHandle
  /** Let the job outlive its owner instead of being cancelled when the owner ends (see {@link JobDetach}). */
  detach?: JobDetach
}

/**
 * How a job may outlive its owner: the work it follows is kept for another agent (a terminal send
 * on a session that is detached, not closed, at a disconnect). Such a job keeps running, ownerless,
 * until an agent adopts its `key` with `ctx.jobs.adopt`, or it ends.
 */
export interface JobDetach {
  /** What an adopter names to take the job over (e.g. the terminal session id). */
  readonly key: string
  /** Asked when the owner ends: true keeps the job running, detached; false cancels it as usual. */
  keep(): boolean
}

/** A snapshot of one job, as `get`, `list`, `kill`, `wait` and settle listeners report it. */
export interface JobInfo {
  id: string
  kind: string
  label: string
  owner: Agent
  status: JobStatus
  /** Human detail for the status line, e.g. `4.2s elapsed`, `finished after 1.0s`, an error message. */
  detail: string
  outputLimitBytes: number
  cancelRequested: boolean
  /** Epoch milliseconds. */
  startedAt: number
  /** Epoch milliseconds, once the job is no longer running. */
  endedAt?: number
}

/** What `ctx.jobs.read` returns: the job plus its output since the previous read. */
export interface JobRead {
  job: JobInfo
  /** Unread output, at most `outputLimitBytes` UTF-8 bytes (the tail). */
  output: string
  /** True when this read lost bytes: output was dropped to respect the byte bound. */
  truncated: boolean
}

/** Called once per job when it stops running. */
export type JobSettledListener = (job: JobInfo) => void
