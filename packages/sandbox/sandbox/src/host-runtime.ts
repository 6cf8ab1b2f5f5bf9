import { chmodSync, lstatSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'

/**
 * The one directory under which every dsh-terminal host keeps its attach socket and token, whatever
 * its environment (`XDG_RUNTIME_DIR`, `TMPDIR`) or workspace: a sandbox can only hide what it can name.
 */
export const HOST_RUNTIME_PARENT = '/tmp/dsh-terminal'

/** Mode of a parent this package creates: everyone may add a directory, only its owner may remove it (like /tmp). */
const PARENT_MODE = 0o1777

/** The stable code of a parent directory that cannot be trusted; the host reports the same code for its own directory. */
export type RuntimeParentErrorCode = 'UNSAFE_RUNTIME_DIR'

/** The host runtime parent is a symlink, a file, another user's, or writable by others without the sticky bit. */
export class RuntimeParentError extends Error {
  /** Always `UNSAFE_RUNTIME_DIR`. */
  readonly code: RuntimeParentErrorCode = 'UNSAFE_RUNTIME_DIR'

  constructor(message: string) {
    super(message)
    this.name = 'RuntimeParentError'
  }
}

/** The directory of one uid's hosts: `<parent>/<uid>` (mode 0700, owned by that uid). */
export function hostRuntimeDir(uid: number, parent: string = HOST_RUNTIME_PARENT): string {
  return join(parent, String(uid))
}

/**
 * Throw {@link RuntimeParentError} unless `parent` is a real directory (not a symlink) owned by root
 * or `uid`, and sticky whenever group or others may write it: otherwise its owner, or anyone, could
 * rename a user's directory away and put a forged one in its place.
 */
export function assertRuntimeParent(parent: string, uid: number): void {
  let stat
  try {
    stat = lstatSync(parent)
  } catch (error) {
    throw new RuntimeParentError(`cannot inspect the runtime directory ${parent}: ${(error as Error).message}`)
  }
  if (stat.isSymbolicLink()) throw new RuntimeParentError(`${parent} is a symlink; remove it (dsh-terminal creates its own directory)`)
  if (!stat.isDirectory()) throw new RuntimeParentError(`${parent} is not a directory; remove it`)
  if (stat.uid !== 0 && stat.uid !== uid) {
    throw new RuntimeParentError(`${parent} belongs to uid ${stat.uid}, not to root or you (uid ${uid}); remove it, or have root create it with mode 1777`)
  }
  const othersWrite = (stat.mode & 0o022) !== 0
  if (othersWrite && (stat.mode & 0o1000) === 0) {
    throw new RuntimeParentError(`${parent} has mode ${(stat.mode & 0o7777).toString(8)}: others may write it but it is not sticky (run: chmod 1777 ${parent})`)
  }
}

/**
 * Create `parent` with mode 1777 when it is missing (so every uid can add its own directory, and a
 * sandbox has a mount point to cover), then check it as {@link assertRuntimeParent} does.
 */
export function ensureRuntimeParent(parent: string = HOST_RUNTIME_PARENT, uid: number = process.getuid?.() ?? -1): string {
  let created = false
  try {
    mkdirSync(parent, { mode: PARENT_MODE })
    created = true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new RuntimeParentError(`cannot create the runtime directory ${parent}: ${(error as Error).message}`)
    }
  }
  // The umask took the group and other bits of a directory we just made; nobody else can touch it yet.
  if (created) chmodSync(parent, PARENT_MODE)
  assertRuntimeParent(parent, uid)
  return parent
}
