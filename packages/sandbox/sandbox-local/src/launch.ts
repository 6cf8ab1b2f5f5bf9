import type { SandboxPolicy } from 'dsh-sandbox'
import { defaultNetwork } from 'dsh-sandbox'
import { bwrapOptions, EMPTY_MOUNT_PLAN, type MountPlan } from './args'
import { withForwarder } from './egress/in-sandbox'
import { type MountCheck, planMountCheck } from './mount-check'
import { type MountinfoEntry, readHostMounts } from './mountinfo'
import { BLOCK_FD, type HeldStart, INFO_FD } from './start-gate'

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
 * The same, for a held start: also the hold's FIFOs (see start-gate), as bwrap's info and block
 * descriptors. A path that cannot be opened (a hold that settled removes them), or that opens as
 * anything but a FIFO, fails the start before bwrap runs (opened to append: nothing is truncated).
 */
const OPEN_HELD_SCRIPT = `exec ${SECCOMP_FD}<"$1" ${INFO_FD}>>"$2" ${BLOCK_FD}<>"$3" || exit 1; [ -p /proc/self/fd/${INFO_FD} ] && [ -p /proc/self/fd/${BLOCK_FD} ] || exit 1; shift 3 && exec "$@"`

/** Prefixes an opener script: prints its first argument on stderr (the terminal, for a session), then drops it. */
const NOTICE_PREFIX = `printf '%s\\n' "$1" >&2; shift; `

/**
 * The confined argv as bwrap will run it: `/bin/sh` opening the filter (and, for a `held` start,
 * the host's FIFOs), then bwrap with `--seccomp 3` (and `--info-fd 4 --block-fd 5`), its options,
 * `--`, and the original command untouched (behind the egress forwarder under the `allowlist`
 * network). A `notice` is printed first, on stderr, so a session
 * shows it above its first prompt. It does not decide whether a start must be held: see
 * {@link checkedBwrapArgv}, which every confinement goes through.
 */
export function bwrapArgv(
  launch: BwrapLaunch,
  argv: readonly string[],
  policy: SandboxPolicy,
  plan: MountPlan = EMPTY_MOUNT_PLAN,
  held?: HeldStart,
  notice?: string,
): string[] {
  const [script, ...scriptArgs] =
    held === undefined ? [OPEN_FILTER_SCRIPT, launch.seccompFilter] : [OPEN_HELD_SCRIPT, launch.seccompFilter, held.infoPath, held.blockPath]
  const opener = notice === undefined ? [script!, 'sh', ...scriptArgs] : [NOTICE_PREFIX + script!, 'sh', notice, ...scriptArgs]
  const gate = held === undefined ? [] : ['--info-fd', String(INFO_FD), '--block-fd', String(BLOCK_FD)]
  return [
    '/bin/sh',
    '-c',
    ...opener,
    launch.bwrapPath,
    '--seccomp',
    String(SECCOMP_FD),
    ...gate,
    ...bwrapOptions(policy, plan),
    '--',
    ...sandboxCommand(argv, policy, plan),
  ]
}

/** The command bwrap runs: `argv`, behind the egress forwarder when the sandbox reaches out through a proxy. */
function sandboxCommand(argv: readonly string[], policy: SandboxPolicy, plan: MountPlan): readonly string[] {
  const allowlist = (policy.network ?? defaultNetwork(policy.mode)) === 'allowlist'
  return allowlist && plan.egress !== undefined ? withForwarder(plan.egress.perl, argv) : argv
}

/**
 * The confined argv, always held for the host's mount check (see `planMountCheck`): `hold`
 * receives what must be verified and returns the FIFOs of the hold. `hostMounts` is this process's
 * mount table.
 */
export async function checkedBwrapArgv(
  launch: BwrapLaunch,
  argv: readonly string[],
  policy: SandboxPolicy,
  plan: MountPlan,
  hold: (check: MountCheck) => Promise<HeldStart>,
  hostMounts: () => readonly MountinfoEntry[] = readHostMounts,
  notice?: string,
): Promise<string[]> {
  const check = planMountCheck(bwrapOptions(policy, plan), policy, plan, hostMounts)
  return bwrapArgv(launch, argv, policy, plan, await hold(check), notice)
}
