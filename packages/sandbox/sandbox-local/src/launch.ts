import type { SandboxPolicy } from 'dsh-sandbox'
import { bwrapOptions, EMPTY_MOUNT_PLAN, type MountPlan } from './args'
import { mountCheckCommand, planMountCheck } from './mount-check'
import { type MountinfoEntry, readHostMounts } from './mountinfo'

/** What starts a sandbox on this host: the bwrap binary and the seccomp filter file it loads. */
export interface BwrapLaunch {
  /** Absolute path of bwrap. */
  readonly bwrapPath: string
  /** Private file holding the encoded seccomp program (see `installFilterFile`). */
  readonly seccompFilter: string
}

/** The descriptor bwrap reads the filter from (`--seccomp 3`); bwrap closes it before the command runs. */
export const SECCOMP_FD = 3

/**
 * Opens the filter as descriptor 3, then becomes bwrap: `exec` keeps the pid, so the spawner's pid
 * is still the outer bwrap. The spawners (node-pty, child_process) pass no descriptor beyond 0–2,
 * so a shell opens it; a missing file fails the start instead of running unfiltered.
 */
const OPEN_FILTER_SCRIPT = `exec ${SECCOMP_FD}<"$1" && shift && exec "$@"`

/**
 * The full confined argv: `/bin/sh` opening the filter, then bwrap with `--seccomp 3`, its
 * options, `--`, and the original command untouched. When a writable workspace holds mounts a
 * concurrent session could race (see `planMountCheck`), the command is preceded by the in-sandbox
 * mount check, which `exec`s it once the mounts are the planned ones. `hostMounts` is this
 * process's mount table, read from /proc only when a check is needed and none is given.
 */
export function bwrapArgv(
  launch: BwrapLaunch,
  argv: readonly string[],
  policy: SandboxPolicy,
  plan: MountPlan = EMPTY_MOUNT_PLAN,
  hostMounts: () => readonly MountinfoEntry[] = readHostMounts,
): string[] {
  const options = bwrapOptions(policy, plan)
  const check = planMountCheck(options, policy, plan, hostMounts)
  return [
    '/bin/sh',
    '-c',
    OPEN_FILTER_SCRIPT,
    'sh',
    launch.seccompFilter,
    launch.bwrapPath,
    '--seccomp',
    String(SECCOMP_FD),
    ...options,
    '--',
    ...(check === undefined ? [] : mountCheckCommand(check)),
    ...argv,
  ]
}
