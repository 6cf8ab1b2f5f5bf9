import { z } from 'zod'

/** Smallest accepted output bound: room for a status line. */
export const MIN_OUTPUT_LIMIT_BYTES = 64

/** Largest accepted output bound (64 MiB): a bound, not a log file. */
export const MAX_OUTPUT_LIMIT_BYTES = 64 * 1024 * 1024

/** `dsh-jobs` configuration; every key is optional. */
export const Config = z
  .object({
    maxActiveJobsPerOwner: z.number().int().min(1).default(10).describe('Running jobs one agent may have at once; more are refused with JOB_LIMIT.'),
    maxFinishedJobsPerOwner: z
      .number()
      .int()
      .min(0)
      .default(50)
      .describe('Finished jobs kept per agent for job_output/job_list; the oldest are forgotten first.'),
    defaultOutputLimitBytes: z
      .number()
      .int()
      .min(MIN_OUTPUT_LIMIT_BYTES)
      .max(MAX_OUTPUT_LIMIT_BYTES)
      .default(262_144)
      .describe('Output bound of a job that does not set outputLimitBytes.'),
  })
  .prefault({})

/** Resolved configuration, as the service receives it. */
export type JobsConfig = z.output<typeof Config>
