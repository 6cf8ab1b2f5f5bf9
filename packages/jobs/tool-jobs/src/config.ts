import { refineResultWindow, resolveResultWindow } from 'dsh-tools'
import { z } from 'zod'
import { MAX_TIMER_MS } from 'dsh-basics'

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
    defaultMaxBytes: z
      .number()
      .int()
      .min(64)
      .optional()
      .describe(
        'The window of a job_output result when the call gives no maxBytes: longer output keeps its head and tail around one line saying what was left out. At most maxResultBytes (default: maxResultBytes).',
      ),
    foldRepeatedLines: z.boolean().default(true).describe('Fold runs of identical lines in job_output into one line plus `[… N more identical lines]`.'),
  })
  .prefault({})
  .superRefine(refineResultWindow)
  .transform(resolveResultWindow)

/** Resolved configuration. */
export type ToolJobsConfig = z.output<typeof Config>
