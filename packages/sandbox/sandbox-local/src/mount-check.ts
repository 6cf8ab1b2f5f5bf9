import { isWithin, type SandboxPolicy, SandboxError } from 'dsh-sandbox'
import { type BwrapMount, type MountPlan, emittedMounts } from './args'
import { escapeMountinfo, type MountinfoEntry, mountIdentity } from './mountinfo'

/*
 * bwrap binds by path, and a session already running in the same writable workspace (or one
 * containing it) can swap a path it planned for a link while bwrap resolves it: the bind then shows what the link names (the
 * host's /proc, its /tmp). No path-based check before the start can close that, so the host reads
 * the new sandbox's mount table while bwrap holds it, after its last mount and before the command
 * runs (see start-gate): every mount whose source or destination lies in the writable workspace
 * must show exactly the directory the host planned, and /tmp and /proc must hold no mount bwrap
 * was not asked for. See the package README ("Sessions side by side").
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
  /** Why it must be there, when it guards more than the workspace: named, with its code, in a refusal. */
  readonly purpose?: MountPurpose
}

/** What a checked mount beyond the workspace's own protects: the private home (and its dotfiles), or a credential mask. */
export type MountPurpose = 'private-home' | 'credential-mask'

/**
 * The stable code a refusal names for each purpose: without that mount the real home or a
 * credential would show, so the start is refused like any other unplanned mount table.
 */
export const MOUNT_PURPOSE_CODES: Readonly<Record<MountPurpose, string>> = {
  'private-home': 'PRIVATE_HOME_MISSING',
  'credential-mask': 'CREDENTIAL_MASK_MISSING',
}

const PURPOSE_WORDS: Readonly<Record<MountPurpose, string>> = {
  'private-home': 'the private home mount the host planned',
  'credential-mask': 'the credential mask the host planned',
}

/** What the host verifies in a held sandbox's mount table; see {@link planMountCheck}. */
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

/**
 * Why a sandbox's mount table (parsed from `/proc/<pid>/mountinfo`, paths relative to its root) is
 * not what `check` expects, or undefined when it is: every mount point in a guarded zone must be
 * an allowed one, and each expected mount must be the last (visible) mount at its point, with its
 * root, its device (when known) and, for a read-only bind, read-only. Mount points in the reason
 * are escaped as mountinfo escapes them, so it stays one line.
 */
export function mountCheckFailure(check: MountCheck, table: readonly MountinfoEntry[]): string | undefined {
  const allowed = new Set(check.allowed)
  for (const mount of table) {
    const guarded = check.zones.some((zone) => isWithin(zone, mount.mountPoint))
    if (guarded && !allowed.has(mount.mountPoint)) return `${escapeMountinfo(mount.mountPoint)} is a mount the sandbox was not given`
  }
  for (const expected of check.expected) {
    let visible: MountinfoEntry | undefined
    for (const mount of table) if (mount.mountPoint === expected.destination) visible = mount
    const matches =
      visible !== undefined &&
      visible.root === expected.root &&
      (expected.device === undefined || (visible.device === expected.device && (!expected.readOnly || visible.readOnly)))
    if (matches) continue
    if (expected.purpose === undefined) return `${escapeMountinfo(expected.destination)} is not the mount the host planned`
    return `${escapeMountinfo(expected.destination)} is not ${PURPOSE_WORDS[expected.purpose]} (${MOUNT_PURPOSE_CODES[expected.purpose]})`
  }
  return undefined
}

/**
 * What the host verifies before every confined start's command runs: nothing unplanned under
 * /tmp and /proc (and the host runtime cover), and each mount from or onto the workspace (its own
 * bind included) showing the identity the host's mount table gives it. Read-only workspaces are
 * checked too: one may lie in another session's writable workspace, which can swap it for a link.
 */
export function planMountCheck(options: readonly string[], policy: SandboxPolicy, plan: MountPlan, hostMounts: () => readonly MountinfoEntry[]): MountCheck {
  const workspace = policy.workspaceRoot
  const mounts = emittedMounts(options)
  // A workspace of / is never bound again (it is the `--ro-bind / /` itself, which nobody can swap).
  const inWorkspace = (path: string | undefined) => workspace !== '/' && path !== undefined && isWithin(workspace, path)
  const racy = mounts.filter((mount) => inWorkspace(mount.source) || inWorkspace(mount.destination))
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
  // The private home, its dotfiles and the credential masks, wherever they lie: the last mount at each of their points.
  const purposeOf = mountPurposes(plan)
  const guarding = mounts.filter(
    (mount, index) => purposeOf(mount.destination) !== undefined && !mounts.slice(index + 1).some((later) => later.destination === mount.destination),
  )
  return {
    zones,
    allowed: [...allowed],
    expected: [...racy.map((mount) => expectedMount(mount, table)), ...guarding.map((mount) => expectedMount(mount, table, purposeOf(mount.destination)))],
  }
}

/** Which mount points hold the private home, its dotfiles or a credential mask. */
function mountPurposes(plan: MountPlan): (destination: string) => MountPurpose | undefined {
  const home = new Set(plan.home === undefined ? [] : [plan.home.path, ...plan.home.files.map((file) => file.destination)])
  const masks = new Set((plan.masks ?? []).map((mask) => mask.path))
  return (destination) => (home.has(destination) ? 'private-home' : masks.has(destination) ? 'credential-mask' : undefined)
}

/** What one bind or tmpfs shows when bwrap mounted what the host planned. */
function expectedMount(mount: BwrapMount, table: readonly MountinfoEntry[], purpose?: MountPurpose): ExpectedMount {
  const why = purpose === undefined ? {} : { purpose }
  if (mount.source === undefined) return { destination: mount.destination, root: '/', readOnly: false, ...why }
  const identity = mountIdentity(table, mount.source)
  if (identity === undefined) {
    throw new SandboxError('SANDBOX_UNAVAILABLE', `no mount of this host contains ${mount.source}, so the sandbox cannot verify its bind; is /proc mounted?`)
  }
  return { destination: mount.destination, root: identity.root, device: identity.device, readOnly: mount.readOnly, ...why }
}
