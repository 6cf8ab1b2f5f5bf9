import type { Context } from '@deepseek-ai/cordis'
import type { z } from 'zod'
import { Config } from './config'
import { LocalSandbox } from './service'

export { Config, type LocalSandboxConfig } from './config'
export { type CheckState, type DiagnosisHost, diagnoseSandbox, type SandboxCheck, type SandboxDiagnosis } from './doctor'
export type { EgressRefusalReason } from './egress/destination'
export type { EgressRefusal } from './egress/proxy'
export { type HostFacts, LocalSandbox, withDoctorAdvice } from './service'

/** Plugin name used in a cordis.yml. */
export const name = 'dsh-sandbox-local'

/** Needs no other service: it is the provider of `ctx.sandbox`. */
export const inject: string[] = []

/**
 * Provide `ctx.sandbox` with bubblewrap confinement. Awaits the service so that a second provider
 * in the same context fails this plugin instead of only being logged.
 */
export async function apply(ctx: Context, config: z.input<typeof Config>): Promise<void> {
  await ctx.plugin(LocalSandbox, Config.parse(config ?? {}))
}
