import { closeSync, constants, type Dir, fstatSync, lstatSync, mkdirSync, openSync, opendirSync, readlinkSync, readSync } from 'node:fs'
import { join } from 'node:path'
import { isWithin } from 'dsh-sandbox'

/*
 * Filesystem steps for the host, which runs as root over a workspace a sandbox may have filled
 * with symbolic links: nothing here follows a link, so a planted link can neither lead a walk out
 * of the workspace nor make the host create a directory elsewhere. A directory is opened with
 * O_NOFOLLOW and then used through its descriptor (`/proc/self/fd/N`), and the host checks where
 * that descriptor really is, so a parent swapped for a link between two steps is caught too.
 * Each step is one synchronous call of a few microseconds (a thread-pool round trip per step cost
 * a session start about a millisecond); the walk that strings many together yields (see git-search).
 */

/** What `lstat` says a path is; a symbolic link is never looked through. */
export type EntryKind = 'directory' | 'file' | 'symlink' | 'other' | 'missing'

/** The kind of `path` itself (not of what a link at it points to). */
export async function entryKind(path: string): Promise<EntryKind> {
  return entryKindNow(path)
}

function entryKindNow(path: string): EntryKind {
  try {
    const info = lstatSync(path)
    if (info.isSymbolicLink()) return 'symlink'
    if (info.isDirectory()) return 'directory'
    return info.isFile() ? 'file' : 'other'
  } catch {
    return 'missing'
  }
}

const DIRECTORY_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW

/**
 * Run `use` with a descriptor path (`/proc/self/fd/N`) of the directory at `path`, only when that
 * directory really is at `path` inside `root`: no component of the way is a link. Otherwise (a
 * link, gone, not a directory, outside) `use` is not called and the result is undefined.
 */
export async function withDirectoryAt<T>(root: string, path: string, use: (handlePath: string) => Promise<T>): Promise<T | undefined> {
  if (!isWithin(root, path)) return undefined
  let fd: number
  try {
    fd = openSync(path, DIRECTORY_FLAGS)
  } catch {
    return undefined
  }
  try {
    const handlePath = `/proc/self/fd/${fd}`
    // The kernel's own name for the open directory: a parent replaced by a link shows here.
    if (readlinkOrUndefined(handlePath) !== path) return undefined
    return await use(handlePath)
  } finally {
    closeSync(fd)
  }
}

/**
 * Create directory `name` in the directory at `parent` (inside `root`), never through a link;
 * true when it exists as a real directory afterwards. Refuses quietly when the way is not plain.
 */
export async function createDirectoryIn(root: string, parent: string, name: string): Promise<boolean> {
  const created = await withDirectoryAt(root, parent, async (handlePath) => {
    // mkdir never follows a link at its last component, and the parent is the opened directory.
    try {
      mkdirSync(join(handlePath, name), { mode: 0o755 })
    } catch {
      // Already there (or refused): what is there decides below.
    }
    return entryKindNow(join(handlePath, name)) === 'directory'
  })
  return created === true
}

/** One directory entry as the walk needs it: its name, and whether it is a real directory. */
export interface DirectoryEntry {
  readonly name: string
  readonly isDirectory: boolean
}

/**
 * Read the entries of the directory at `path` (inside `root`, reached without links) one by one
 * while `take` allows, so a huge directory costs only what the caller's bound allows. Opening the
 * directory takes one too: many small directories cost time as well.
 */
export async function readEntries(root: string, path: string, take: () => boolean, visit: (entry: DirectoryEntry) => void): Promise<void> {
  await withDirectoryAt(root, path, async (handlePath) => {
    if (!take()) return
    let dir: Dir
    try {
      dir = opendirSync(handlePath, { bufferSize: 1024 })
    } catch {
      return
    }
    try {
      // readSync only takes from the buffer of 1024 entries or reads the next batch: short steps.
      for (let entry = dir.readSync(); entry !== null; entry = dir.readSync()) {
        if (!take()) return
        visit({ name: entry.name, isDirectory: entry.isDirectory() })
      }
    } catch {
      // A directory removed while it is read ends its walk; what was seen is kept.
    } finally {
      dir.closeSync()
    }
  })
}

/** At most this many bytes of a pointer file are read: `gitdir: <path>` and `commondir` are one line. */
const POINTER_FILE_BYTES = 4096

/**
 * The text of the small regular file at `path`, never through a link and never blocking on a
 * FIFO or device planted in its place; undefined when it is anything else.
 */
export async function readPointerFile(path: string): Promise<string | undefined> {
  let fd: number
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch {
    return undefined
  }
  try {
    if (!fstatSync(fd).isFile()) return undefined
    const buffer = Buffer.alloc(POINTER_FILE_BYTES)
    const bytesRead = readSync(fd, buffer, 0, POINTER_FILE_BYTES, 0)
    return buffer.subarray(0, bytesRead).toString('utf8')
  } catch {
    return undefined
  } finally {
    closeSync(fd)
  }
}

function readlinkOrUndefined(path: string): string | undefined {
  try {
    return readlinkSync(path)
  } catch {
    return undefined
  }
}
