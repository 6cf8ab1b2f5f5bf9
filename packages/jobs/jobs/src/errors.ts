/** Stable codes of the errors `ctx.jobs` throws; callers route on these, never on message text. */
export type JobErrorCode = 'UNKNOWN_JOB' | 'JOB_LIMIT' | 'INVALID_JOB' | 'OWNER_ENDED' | 'REGISTRY_CLOSED'

/** An error raised by the job registry, with a stable {@link JobErrorCode}. */
export class JobError extends Error {
  constructor(
    /** Stable code for routing. */
    readonly code: JobErrorCode,
    message: string,
  ) {
    super(message)
    this.name = 'JobError'
  }
}
