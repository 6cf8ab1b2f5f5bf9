import type { Context } from '@deepseek-ai/cordis'
import type { z } from 'zod'
import { Config } from './config'
import { LocalSubprocessRuntime } from './runtime'

export { Config, type LocalSubprocessConfig } from './config'
export { detectLimitPlacement } from './cgroup/limiter'
export type { LimitController, LimitHierarchy, LimitPlacement } from './cgroup/placement'

/** Plugin name used in a cordis.yml. */
export const name = 'dsh-subprocess-local'

/** The provider needs no other service. */
export const inject: string[] = []

/**
 * Provide `ctx.subprocess`. The service is constructed here (not as a nested plugin) so that a
 * second provider in the same context makes this plugin's own load fail.
 */
export function apply(ctx: Context, config: z.input<typeof Config>): void {
  new LocalSubprocessRuntime(ctx, Config.parse(config))
}
