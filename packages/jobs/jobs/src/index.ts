import type { Context } from '@deepseek-ai/cordis'
import type { z } from 'zod'
import { Config } from './config'
import { JobService } from './service'

export { Config, MAX_OUTPUT_LIMIT_BYTES, MIN_OUTPUT_LIMIT_BYTES, type JobsConfig } from './config'
export { JobError, type JobErrorCode } from './errors'
export { formatElapsed } from './job'
export { OutputBuffer } from './output'
export { JobRegistry, type JobRegistryOptions } from './registry'
export { JobService } from './service'
export * from './types'

/** Plugin name used in a cordis.yml. */
export const name = 'dsh-jobs'

/** Provide `ctx.jobs` with the given limits. */
export function apply(ctx: Context, config: z.input<typeof Config>): void {
  ctx.plugin(JobService, Config.parse(config))
}
