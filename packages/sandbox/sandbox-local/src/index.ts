import type { Context } from '@deepseek-ai/cordis'
import type { z } from 'zod'
import { Config } from './config'
import { LocalSandbox } from './service'

export { bwrapArgv, bwrapOptions, EMPTY_MOUNT_PLAN, type MountPlan } from './args'
export { Config, type LocalSandboxConfig } from './config'
export { CONTROL_SOCKETS } from './control-sockets'
export { type GitProtections, gitProtections } from './git-metadata'
export { hostInstallationRoots, installationRoot } from './host-installation'
export { assertConfined, type BwrapFacts, explainBwrapFailure, probeBwrap, PROOF_SCRIPT, resolveExecutable } from './probe'
export { planMounts, type ProtectionSources } from './protected-paths'
export { type HostFacts, LocalSandbox } from './service'
export { LEGACY_TIOCSTI_SYSCTL, readLegacyTiocsti, type TiocstiFact } from './tiocsti'

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
