/**
 * The provider's parts, for this repository's tests and benchmarks: the bwrap argv builder, the
 * probe, the kernel masks, the seccomp program and the git-metadata search. Not the plugin's API —
 * mount the plugin from `dsh-sandbox-local` and use `ctx.sandbox`; these names may change in any release.
 */
export {
  type BwrapMount,
  bwrapOptions,
  type CredentialMask,
  type EgressPlan,
  EMPTY_MOUNT_PLAN,
  emittedMounts,
  type MountPlan,
  type PrivateHome,
  type ReadOnlyBind,
} from './args'
export { CONTROL_SOCKETS } from './control-sockets'
export {
  decideDestination,
  displayTarget,
  type EgressVerdict,
  type FixedAddresses,
  forbiddenAddress,
  hostInterfaceAddresses,
  printable,
} from './egress/destination'
export { hostsFileAddresses, parseHostsFile } from './egress/hosts-file'
export { EgressProxies } from './egress/egress-proxies'
export {
  connectHelperScript,
  EGRESS_CONNECT_HELPER,
  EGRESS_DIRECTORY,
  EGRESS_PORT,
  EGRESS_SOCKET,
  egressEnvironment,
  systemPerl,
  withForwarder,
} from './egress/in-sandbox'
export { EgressProxy, MAX_EGRESS_CONNECTIONS, refusalAdvice } from './egress/proxy'
export {
  type CredentialPlan,
  type CredentialRequest,
  expandHomePath,
  HOME_CREDENTIALS,
  planCredentialMasks,
  ROOT_HOME,
  SYSTEM_CREDENTIALS,
} from './credentials'
export {
  canonicalHome,
  DEFAULT_HOME_FILES,
  ensurePrivateDirectory,
  GIT_CONFIG_INCLUDE,
  type HomeRequest,
  homeFileBinds,
  homesDirectory,
  HOST_GITCONFIG,
  planPrivateHome,
  workspaceHomeName,
} from './private-home'
export { type GitProtections, gitProtections } from './git-metadata'
export { DEFAULT_GIT_SEARCH_LIMITS, type GitSearchLimits } from './git-search'
export { hostInstallationRoots, installationRoot } from './host-installation'
export { type BwrapLaunch, bwrapArgv, checkedBwrapArgv, SECCOMP_FD } from './launch'
export { FifoPool, type HoldFifos, releaseHoldFifos, STALE_POOL_MS, sweepStalePools } from './fifo-pool'
export { assertConfined, type BwrapFacts, explainBwrapFailure, type ProbeHost, probeBwrap, proofScript, resolveExecutable } from './probe'
export {
  BWRAP_PROC_COVERS,
  type ExpectedMount,
  GUARDED_ZONES,
  MOUNT_PURPOSE_CODES,
  type MountPurpose,
  type MountCheck,
  mountCheckFailure,
  planMountCheck,
} from './mount-check'
export {
  BLOCK_FD,
  DEFAULT_GATE_TIMING,
  type GateTiming,
  type HeldStart,
  INFO_FD,
  MOUNT_CHECK_FAILED,
  mountCheckMessage,
  StartGate,
} from './start-gate'
export { escapeMountinfo, type MountIdentity, type MountinfoEntry, mountIdentity, parseMountinfo, readHostMounts, unescapeMountinfo } from './mountinfo'
export { KERNEL_MASKS, type KernelMask, type KernelMaskTreatment, kernelMaskOptions } from './proc-masks'
export { encode, INSTRUCTION_BYTES, type Instruction, MAX_INSTRUCTIONS, RESULT } from './seccomp/bpf'
export { filterDirectory, filterFileName, filterGuard, installFilterFile, installSeccompFilter } from './seccomp/filter-file'
export { encodedSeccompProgram, seccompArchitecture, seccompProgram, X32_SYSCALL_BIT } from './seccomp/program'
export { CLONE_NAMESPACE_FLAGS, type Condition, ERRNO, HARMLESS_PERSONALITIES, REFUSED_IOCTLS, SECCOMP_RULES, type SeccompRule } from './seccomp/rules'
export { AUDIT_ARCH, type SeccompArchitecture, SYSCALL_NUMBERS, type SyscallName } from './seccomp/syscalls'
export { planMounts, type ProtectionSources } from './protected-paths'
export { LEGACY_TIOCSTI_SYSCTL, readLegacyTiocsti, type TiocstiFact } from './tiocsti'
