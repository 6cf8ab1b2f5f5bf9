import { isWithin, type SandboxPolicy, SandboxError } from 'dsh-sandbox'
import { type BwrapMount, type MountPlan, emittedMounts } from './args'
import { escapeMountinfo, type MountinfoEntry, mountIdentity } from './mountinfo'

/*
 * bwrap binds by path, and a session already running in the same writable workspace can swap a
 * path it planned for a link while bwrap resolves it: the bind then shows what the link names (the
 * host's /proc, its /tmp). No path-based check outside can close that, so the sandbox checks its
 * own mount table before the command runs: every mount whose source or destination lies in the
 * writable workspace must show exactly the directory the host planned, and /tmp and /proc must
 * hold no mount bwrap was not asked for. See the package README ("Sessions side by side").
 */

/** One mount the sandbox must show, as the host planned it (paths unescaped). */
export interface ExpectedMount {
  /** The mount point inside the sandbox. */
  readonly destination: string
  /** The mountinfo "root" field: the directory of the filesystem shown there. */
  readonly root: string
  /** `major:minor` of that filesystem; undefined for a fresh tmpfs, whose device is not known beforehand. */
  readonly device?: string
  /** Whether the mount must be read-only (a `--ro-bind`). */
  readonly readOnly: boolean
}

/** What the in-sandbox check verifies; see {@link planMountCheck}. */
export interface MountCheck {
  /** Directories under which every mount point must be one of `allowed`. */
  readonly zones: readonly string[]
  /** The mount points allowed in `zones`: bwrap's own there and the host's that `--ro-bind / /` copies. */
  readonly allowed: readonly string[]
  /** Mounts that must be the visible (last) mount at their point, with this identity. */
  readonly expected: readonly ExpectedMount[]
}

/** Where the sandbox replaces the host's directory with its own: nothing but planned mounts may appear there. */
export const GUARDED_ZONES: readonly string[] = ['/tmp', '/proc']

/** What bwrap 0.8's `--proc` mounts itself: read-only covers of these, when the kernel has them. */
export const BWRAP_PROC_COVERS: readonly string[] = ['/proc/sys', '/proc/sysrq-trigger', '/proc/irq', '/proc/bus']

/** The exit status of a sandbox whose mounts are not what the host planned: the command never ran. */
export const MOUNT_CHECK_FAILED = 125

/** Where the check reads the sandbox's mount table by default. */
export const SANDBOX_MOUNTINFO = '/proc/self/mountinfo'

/**
 * The checker, run by `/bin/sh` inside the sandbox as `sh -c <script> dsh-mount-check <mountinfo>
 * <z> <zone>… <a> <allowed>… <n> (<point> <root> <device|-> <ro|->)… -- <argv>`, all paths escaped
 * as mountinfo escapes them. Builtins only, no fork: one pass over the mount table collects each
 * line as `<NL>point<TAB>root<TAB>device<TAB>ro|rw<TAB>` and checks the zones, then each expected
 * mount must be the last line at its point (the one mounted last there). Only patterns that start
 * with a literal are used to cut the text (dash scans `##*x` in quadratic time). Exit 125 and one
 * line on stderr on any mismatch, else `exec` the command.
 */
export const MOUNT_CHECK_SCRIPT = `set -f
nl='
'
tab='	'
fail() {
  printf 'dsh-sandbox: mount check failed: %s; another session may be changing the workspace\\n' "$1" >&2
  exit ${MOUNT_CHECK_FAILED}
}
counted() {
  case $1 in '' | *[!0-9]*) fail 'its arguments are malformed' ;; esac
  [ "$2" -gt "$(($1 * $3))" ] || fail 'its arguments are malformed'
}
mountinfo=$1
shift
counted "$1" "$#" 1
n=$1
shift
zones=
while [ "$n" -gt 0 ]; do zones=$zones$1$nl n=$((n - 1)); shift; done
counted "$1" "$#" 1
n=$1
shift
allowed=$nl
while [ "$n" -gt 0 ]; do allowed=$allowed$1$nl n=$((n - 1)); shift; done
[ -r "$mountinfo" ] || fail "$mountinfo is unreadable"
mounts=
while IFS=' ' read -r _ _ device root point options _; do
  mounts=$mounts$nl$point$tab$root$tab$device$tab\${options%%,*}$tab
  IFS=$nl
  for zone in $zones; do
    case $point in
    "$zone" | "$zone"/*)
      case $allowed in *"$nl$point$nl"*) ;; *) fail "$point is a mount the sandbox was not given" ;; esac
      ;;
    esac
  done
done <"$mountinfo"
counted "$1" "$#" 4
n=$1
shift
while [ "$n" -gt 0 ]; do
  entry=$nl$1$tab$2$tab
  [ "$3" = - ] || entry=$entry$3$tab
  [ "$4" = - ] || entry=$entry$4$tab
  before=\${mounts%"$nl$1$tab"*}
  case $mounts in "$before$entry"*) ;; *) fail "$1 is not the mount the host planned" ;; esac
  n=$((n - 1))
  shift 4
done
[ "$1" = -- ] || fail 'its arguments are malformed'
shift
exec "$@"
`

/**
 * What the sandbox must verify before the command runs, or undefined when nothing can be raced: a
 * read-only workspace, or a writable one with no mount inside it but the workspace itself (whose
 * path lies outside it). Identities come from the host's own mount table, read only when needed;
 * the workspace bind is checked too once a check runs (another session's workspace may contain it).
 */
export function planMountCheck(
  options: readonly string[],
  policy: SandboxPolicy,
  plan: MountPlan,
  hostMounts: () => readonly MountinfoEntry[],
): MountCheck | undefined {
  if (policy.mode !== 'workspace-write') return undefined
  const workspace = policy.workspaceRoot
  const mounts = emittedMounts(options)
  const inWorkspace = (path: string | undefined) => path !== undefined && isWithin(workspace, path)
  const racy = mounts.filter((mount) => inWorkspace(mount.source) || inWorkspace(mount.destination))
  if (racy.every((mount) => mount.source === workspace && mount.destination === workspace)) return undefined
  const table = hostMounts()
  const zones = [...GUARDED_ZONES]
  if (plan.hostRuntimeParent !== undefined && !zones.some((zone) => isWithin(zone, plan.hostRuntimeParent!))) zones.push(plan.hostRuntimeParent)
  const inZone = (path: string) => zones.some((zone) => isWithin(zone, path))
  const allowed = new Set([
    ...mounts.map((mount) => mount.destination).filter(inZone),
    ...BWRAP_PROC_COVERS,
    // `--ro-bind / /` (and the read-only masks of /proc) copy the host's mounts below them.
    ...table.map((mount) => mount.mountPoint).filter(inZone),
  ])
  return { zones, allowed: [...allowed], expected: racy.map((mount) => expectedMount(mount, table)) }
}

/** What one bind or tmpfs shows when bwrap mounted what the host planned. */
function expectedMount(mount: BwrapMount, table: readonly MountinfoEntry[]): ExpectedMount {
  if (mount.source === undefined) return { destination: mount.destination, root: '/', readOnly: false }
  const identity = mountIdentity(table, mount.source)
  if (identity === undefined) {
    throw new SandboxError('SANDBOX_UNAVAILABLE', `no mount of this host contains ${mount.source}, so the sandbox cannot verify its bind; is /proc mounted?`)
  }
  return { destination: mount.destination, root: identity.root, device: identity.device, readOnly: mount.readOnly }
}

/**
 * The argv prefix that runs the check inside the sandbox and then `exec`s what follows it:
 * `/bin/sh -c <MOUNT_CHECK_SCRIPT> dsh-mount-check <mountinfo> … --`.
 */
export function mountCheckCommand(check: MountCheck, mountinfo: string = SANDBOX_MOUNTINFO): string[] {
  const counted = (values: readonly string[]) => [String(values.length), ...values.map(escapeMountinfo)]
  const expected = check.expected.flatMap((mount) => [
    escapeMountinfo(mount.destination),
    escapeMountinfo(mount.root),
    mount.device ?? '-',
    mount.readOnly && mount.device !== undefined ? 'ro' : '-',
  ])
  return [
    '/bin/sh',
    '-c',
    MOUNT_CHECK_SCRIPT,
    'dsh-mount-check',
    mountinfo,
    ...counted(check.zones),
    ...counted(check.allowed),
    String(check.expected.length),
    ...expected,
    '--',
  ]
}
