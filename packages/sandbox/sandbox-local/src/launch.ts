import type { SandboxPolicy } from 'dsh-sandbox'
import { bwrapOptions, type MountPlan } from './args'

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
 * options, `--`, and the original command untouched.
 */
export function bwrapArgv(launch: BwrapLaunch, argv: readonly string[], policy: SandboxPolicy, plan?: MountPlan): string[] {
  return [
    '/bin/sh',
    '-c',
    OPEN_FILTER_SCRIPT,
    'sh',
    launch.seccompFilter,
    launch.bwrapPath,
    '--seccomp',
    String(SECCOMP_FD),
    ...bwrapOptions(policy, plan),
    '--',
    ...argv,
  ]
}
