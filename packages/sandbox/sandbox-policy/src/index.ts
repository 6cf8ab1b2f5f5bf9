import type { Context } from '@deepseek-ai/cordis'
import type { z } from 'zod'
import { Config } from './config'
import { SandboxPolicyService } from './service'

export { Config, type SandboxPolicyConfig } from './config'
export { isWithin, resolveSandboxCwd } from './cwd'
export { SandboxPolicyError, type SandboxPolicyErrorCode } from './errors'
export { SandboxPolicyService } from './service'
export type { ModeChange, ModeChangeListener, OwnerListenerOptions, ResolvedSandboxPolicy } from './types'

/** Plugin name used in a cordis.yml. */
export const name = 'dsh-sandbox-policy'

/** Needs no other service: owners are passed in by the caller. */
export const inject: string[] = []

/**
 * Provide `ctx.sandboxPolicy`. Awaits the service so a second policy in the same context fails
 * this plugin instead of only being logged.
 */
export async function apply(ctx: Context, config: z.input<typeof Config>): Promise<void> {
  await ctx.plugin(SandboxPolicyService, Config.parse(config ?? {}))
}
