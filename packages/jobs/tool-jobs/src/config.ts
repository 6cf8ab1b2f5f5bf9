import { z } from 'zod'

/** Largest delay `setTimeout` accepts; longer waits would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1

/** `dsh-tool-jobs` configuration; every key is optional. */
export const Config = z
  .object({
    maxWaitMs: z
      .number()
      .int()
      .min(0)
      .max(MAX_TIMER_MS)
      .default(30_000)
      .describe('Longest job_output {wait: true} blocks before it reports a still-running job.'),
    maxResultBytes: z.number().int().min(64).default(262_144).describe('Cap on every job tool result, errors included (tail kept, so status lines survive).'),
  })
  .prefault({})

/** Resolved configuration. */
export type ToolJobsConfig = z.output<typeof Config>
