import type { Context } from '@deepseek-ai/cordis'
import type { z } from 'zod'
import { Config } from './config'
import { LocalSubprocessRuntime } from './runtime'

export { Config, type LocalSubprocessConfig } from './config'
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
