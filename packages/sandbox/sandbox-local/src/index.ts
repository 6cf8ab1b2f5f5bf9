import type { Context } from '@deepseek-ai/cordis'
import type { z } from 'zod'
import { Config } from './config'
import { LocalSandbox } from './service'

export { bwrapOptions, EMPTY_MOUNT_PLAN, type MountPlan } from './args'
export { Config, type LocalSandboxConfig } from './config'
export { CONTROL_SOCKETS } from './control-sockets'
export { type GitProtections, gitProtections } from './git-metadata'
export { DEFAULT_GIT_SEARCH_LIMITS, type GitSearchLimits } from './git-search'
export { hostInstallationRoots, installationRoot } from './host-installation'
export { type BwrapLaunch, bwrapArgv, SECCOMP_FD } from './launch'
export { assertConfined, type BwrapFacts, explainBwrapFailure, type ProbeHost, probeBwrap, proofScript, resolveExecutable } from './probe'
export { KERNEL_MASKS, type KernelMask, type KernelMaskTreatment, kernelMaskOptions } from './proc-masks'
export { encode, INSTRUCTION_BYTES, type Instruction, MAX_INSTRUCTIONS, RESULT } from './seccomp/bpf'
export { filterDirectory, filterFileName, filterGuard, installFilterFile, installSeccompFilter } from './seccomp/filter-file'
export { encodedSeccompProgram, seccompArchitecture, seccompProgram, X32_SYSCALL_BIT } from './seccomp/program'
export { CLONE_NAMESPACE_FLAGS, type Condition, ERRNO, HARMLESS_PERSONALITIES, REFUSED_IOCTLS, SECCOMP_RULES, type SeccompRule } from './seccomp/rules'
export { AUDIT_ARCH, type SeccompArchitecture, SYSCALL_NUMBERS, type SyscallName } from './seccomp/syscalls'
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
