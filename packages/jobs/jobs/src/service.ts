import { type Context, Service } from '@deepseek-ai/cordis'
import type { Agent } from 'dsh-agent'
import type { JobsConfig } from './config'
import { JobRegistry } from './registry'
import type { JobInfo, JobRead, JobSettledListener, StartJobOptions } from './types'

declare module '@deepseek-ai/cordis' {
  interface Context {
    /** Background job registry (plugin `dsh-jobs`). */
    jobs: JobService
  }
}

/**
 * `ctx.jobs`: background work that outlives a tool call (e.g. a terminal send), owned by an exact
 * agent. The seam other providers may replace; this one keeps jobs in process.
 */
export class JobService extends Service {
  private readonly store: JobRegistry

  constructor(ctx: Context, config: JobsConfig) {
    super(ctx, 'jobs')
    const logger = ctx.logger('jobs')
    this.store = new JobRegistry({ ...config, report: (error) => logger.warn(error) })
    ctx.effect(() => () => this.store.close(), 'jobs: cancel and await every job')
  }

  /**
   * Start a job; returns `<kind>-<n>` synchronously. `run` is called once; if it throws, nothing is
   * registered and its error propagates. Throws JobError INVALID_JOB, OWNER_ENDED, JOB_LIMIT.
   */
  start(options: StartJobOptions): string {
    return this.store.start(options)
  }

  /** The owner's job, or undefined: another owner's id is indistinguishable from an unknown one. */
  get(id: string, owner: Agent): JobInfo | undefined {
    return this.store.get(id, owner)
  }

  /** The owner's jobs in start order. */
  list(owner: Agent): JobInfo[] {
    return this.store.list(owner)
  }

  /** Take the job's output since the previous read, bounded to its `outputLimitBytes` (tail kept). */
  read(id: string, owner: Agent): JobRead {
    return this.store.read(id, owner)
  }

  /** Request cancellation (idempotent; finished jobs are left alone) and return the job's snapshot. */
  kill(id: string, owner: Agent, reason?: string): JobInfo {
    return this.store.kill(id, owner, reason)
  }

  /** Resolve with the job's snapshot once it stops running, or as soon as `signal` aborts. */
  wait(id: string, owner: Agent, signal?: AbortSignal): Promise<JobInfo> {
    return this.store.wait(id, owner, signal)
  }

  /** Take over, for `owner`, the jobs detached under `key` when their owner ended (see `StartJobOptions.detach`). */
  adopt(key: string, owner: Agent): JobInfo[] {
    return this.store.adopt(key, owner)
  }

  /** Call `listener` once per job that stops running, until the calling plugin unloads. */
  onSettled(listener: JobSettledListener): () => Promise<void> {
    return this.ctx.effect(() => this.store.subscribe(listener), 'jobs.onSettled')
  }
}
