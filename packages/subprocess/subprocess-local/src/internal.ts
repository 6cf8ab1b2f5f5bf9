/**
 * The provider's parts, for this repository's tests and benchmarks: the runtime with its injection
 * seams, the cgroup limiter, the inspectors and the terminal-modes helpers. Not the plugin's API —
 * mount the plugin from `dsh-subprocess-local` and use `ctx.subprocess`; these names may change in
 * any release.
 */
export { LocalSubprocessRuntime, type LocalSubprocessRuntimeOptions } from './runtime'
export { CgroupLimiter, type CgroupLimiterOptions, type SessionLimits } from './cgroup/limiter'
export { type CgroupFiles, cgroupFs } from './cgroup/files'
export { LocalTerminal } from './terminal'
export { LinuxInspector, type LinuxInspectorOptions } from './linux/inspector'
export { procFs, type FileIdentity, type ProcSource } from './linux/proc-source'
export { DarwinInspector, type CommandRunner, type SyncCommandRunner } from './darwin/ps-inspector'
export type { TerminalModesSource } from './modes/modes-source'
export { SttyModes } from './modes/stty-modes'
export { TermiosModes, type TermiosModesOptions } from './modes/termios-modes'
export type { MemberScan, MemberScope, ProcessIdentity, ProcessInspector, ProcessRecord, SignalDisposition } from './inspector'
