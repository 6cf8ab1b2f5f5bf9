import type { Context } from '@deepseek-ai/cordis'
import type { z } from 'zod'
import { Config } from './config'
import { RemoteSubprocessRuntime } from './runtime'

export { Config, type RemoteSubprocessConfig } from './config'
export { SessionHostCallError } from './errors'
export { RemoteSubprocessRuntime } from './runtime'

/** Plugin name used in a cordis.yml. */
export const name = 'dsh-subprocess-remote'

/** The provider needs no other service. */
export const inject: string[] = []

/**
 * Provide `ctx.subprocess` through a session host, instead of dsh-subprocess-local. Constructed here
 * (not as a nested plugin) so that a second provider in the same context makes this load fail.
 */
export function apply(ctx: Context, config: z.input<typeof Config>): void {
  new RemoteSubprocessRuntime(ctx, Config.parse(config))
}
