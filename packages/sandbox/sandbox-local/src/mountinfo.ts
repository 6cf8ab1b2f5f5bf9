import { readFileSync } from 'node:fs'
import { posix } from 'node:path'
import { isWithin } from 'dsh-sandbox'

/*
 * The parts of `/proc/<pid>/mountinfo` (proc(5)) the mount check needs, and the identity a bind
 * mount of a host path shows there. Paths are kept unescaped here; `escapeMountinfo` gives the
 * form the kernel prints, which is what the in-sandbox check compares byte for byte.
 */

/** One mountinfo line: where the mount is, which directory of which filesystem it shows. */
export interface MountinfoEntry {
  /** The mount's id (field 1) and its parent's (field 2): a mount stacked on another has it as parent. */
  readonly id: string
  readonly parent: string
  /** `major:minor` of the filesystem (field 3). */
  readonly device: string
  /** The directory of that filesystem shown at the mount point (field 4), unescaped. */
  readonly root: string
  /** Where it is mounted, relative to the reader's root (field 5), unescaped. */
  readonly mountPoint: string
  /** Whether the mount is read-only (its per-mount options, field 6, start with `ro`). */
  readonly readOnly: boolean
}

/** What a bind of a host path shows in mountinfo: the filesystem and the directory inside it. */
export interface MountIdentity {
  readonly device: string
  /** The mountinfo "root" field the bind will show, unescaped. */
  readonly root: string
}

/** The characters the kernel prints as a backslash and three octal digits in mountinfo paths. */
const ESCAPED = /[ \t\n\\]/g

/** `path` as mountinfo prints it: space, tab, newline and backslash as `\ooo` octal escapes. */
export function escapeMountinfo(path: string): string {
  return path.replace(ESCAPED, (character) => `\\${character.charCodeAt(0).toString(8).padStart(3, '0')}`)
}

/** The path a mountinfo field names: every `\ooo` octal escape turned back into its byte. */
export function unescapeMountinfo(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)))
}

/** The entries of a mountinfo text, in the kernel's order; malformed lines are skipped. */
export function parseMountinfo(text: string): MountinfoEntry[] {
  const entries: MountinfoEntry[] = []
  for (const line of text.split('\n')) {
    const fields = line.split(' ')
    const [id, parent, device, root, mountPoint, options] = fields
    if (id === undefined || parent === undefined || root === undefined || mountPoint === undefined || !/^\d+:\d+$/.test(device ?? '')) continue
    const readOnly = options !== undefined && options.split(',')[0] === 'ro'
    entries.push({ id, parent, device: device!, root: unescapeMountinfo(root), mountPoint: unescapeMountinfo(mountPoint), readOnly })
  }
  return entries
}

/** This process's mount table: the namespace bwrap starts in, so what its `--ro-bind / /` copies. */
export function readHostMounts(file = '/proc/self/mountinfo'): MountinfoEntry[] {
  return parseMountinfo(readFileSync(file, 'utf8'))
}

/**
 * The identity a bind of the canonical host path `source` will show: the mount that path reaches
 * (from the root mount down, at each step the child mount whose mount point contains the path; a
 * mount stacked on another is that one's child, so the visible, last mounted one wins), with
 * `source`'s place below that mount point appended to its root. Undefined without a root mount.
 */
export function mountIdentity(mounts: readonly MountinfoEntry[], source: string): MountIdentity | undefined {
  const ids = new Set(mounts.map((mount) => mount.id))
  // The namespace's root: listed at `/` with a parent outside the table (the last such, if several).
  let current = lastListed(mounts, (mount) => mount.mountPoint === '/' && !ids.has(mount.parent))
  while (current !== undefined) {
    const parent = current
    // Of two children on the way (one mounted over the other's parent directory), the later hides the earlier.
    const child = lastListed(mounts, (mount) => mount.parent === parent.id && mount.id !== parent.id && isWithin(mount.mountPoint, source))
    if (child === undefined) break
    current = child
  }
  if (current === undefined) return undefined
  const below = posix.relative(current.mountPoint, source)
  return { device: current.device, root: below === '' ? current.root : posix.join(current.root, below) }
}

function lastListed(mounts: readonly MountinfoEntry[], test: (mount: MountinfoEntry) => boolean): MountinfoEntry | undefined {
  for (let index = mounts.length - 1; index >= 0; index--) if (test(mounts[index]!)) return mounts[index]
  return undefined
}
