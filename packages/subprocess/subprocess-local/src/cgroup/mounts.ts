/** A mounted cgroup hierarchy and where the host's own cgroup sits in it. */
export interface MountedHierarchy {
  /** 1 for a `cgroup` mount, 2 for the unified `cgroup2` mount. */
  readonly version: 1 | 2
  /** v1: the controllers attached to the mount (`pids`, `memory`, …). v2: empty (they are per cgroup). */
  readonly controllers: readonly string[]
  /** Where the hierarchy is mounted. */
  readonly mountPoint: string
  /** Directory of the host's own cgroup; undefined when this mount does not show it. */
  readonly ownDir: string | undefined
}

interface MountEntry {
  readonly root: string
  readonly mountPoint: string
  readonly fsType: string
  readonly superOptions: readonly string[]
}

/**
 * The cgroup hierarchies mounted on this host (from `/proc/self/mountinfo`) joined with the host's
 * membership (`/proc/self/cgroup`). A hierarchy mounted twice is listed once: the first mount that
 * shows the host's cgroup. Malformed lines are skipped.
 */
export function parseHierarchies(mountInfo: string, selfCgroup: string): MountedHierarchy[] {
  const memberships = parseMemberships(selfCgroup)
  const found = new Map<string, MountedHierarchy>()
  for (const mount of parseMountInfo(mountInfo)) {
    const version = mount.fsType === 'cgroup2' ? 2 : mount.fsType === 'cgroup' ? 1 : undefined
    if (version === undefined) continue
    // v1 super options name the attached controllers among rw/ro and friends; a membership line
    // lists the same controllers, so matching any one of them identifies the hierarchy.
    const membership =
      version === 2
        ? memberships.find((line) => line.id === '0')
        : memberships.find((line) => line.controllers.some((name) => mount.superOptions.includes(name)))
    const controllers = version === 2 ? [] : (membership?.controllers ?? [])
    const key = version === 2 ? 'v2' : `v1:${[...controllers].sort().join(',')}`
    const ownDir = membership ? directoryOf(mount, membership.path) : undefined
    const known = found.get(key)
    if (!known || (known.ownDir === undefined && ownDir !== undefined)) found.set(key, { version, controllers, mountPoint: mount.mountPoint, ownDir })
  }
  return [...found.values()]
}

/** `/proc/self/mountinfo` lines: `id parent dev root mountpoint options [optional…] - fstype source superoptions`. */
function parseMountInfo(text: string): MountEntry[] {
  const entries: MountEntry[] = []
  for (const line of text.split('\n')) {
    const fields = line.split(' ')
    const separator = fields.indexOf('-', 6)
    const [root, mountPoint] = [fields[3], fields[4]]
    const [fsType, superOptions] = [fields[separator + 1], fields[separator + 3]]
    if (separator < 0 || !root || !mountPoint || !fsType || superOptions === undefined) continue
    entries.push({ root: unescapeField(root), mountPoint: unescapeField(mountPoint), fsType, superOptions: superOptions.split(',') })
  }
  return entries
}

/** `/proc/self/cgroup` lines: `hierarchy-id:controllers:path` (v2: `0::path`). */
function parseMemberships(text: string): { id: string; controllers: string[]; path: string }[] {
  return text.split('\n').flatMap((line) => {
    const first = line.indexOf(':')
    const second = line.indexOf(':', first + 1)
    if (first <= 0 || second < 0) return []
    const path = line.slice(second + 1)
    if (!path.startsWith('/')) return []
    const controllers = line
      .slice(first + 1, second)
      .split(',')
      .filter((name) => name !== '')
    return [{ id: line.slice(0, first), controllers, path }]
  })
}

/** The mount's view of a cgroup path; undefined when the path lies outside the mounted subtree. */
function directoryOf(mount: MountEntry, path: string): string | undefined {
  // A cgroup removed while we are in it reads "… (deleted)"; one outside our namespace starts "/..".
  if (path.endsWith(' (deleted)') || path === '/..' || path.startsWith('/../')) return undefined
  const root = mount.root === '/' ? '' : mount.root
  if (path !== root && !path.startsWith(`${root}/`)) return undefined
  const rest = path.slice(root.length)
  return rest === '' || rest === '/' ? mount.mountPoint : `${mount.mountPoint.replace(/\/$/, '')}${rest}`
}

/** Undo the octal escapes mountinfo uses for space, tab, newline and backslash. */
function unescapeField(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)))
}
