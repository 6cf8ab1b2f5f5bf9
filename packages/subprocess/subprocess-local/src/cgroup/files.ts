import { closeSync, mkdirSync, openSync, readdirSync, readSync, rmdirSync, statSync, writeFileSync } from 'node:fs'
import { rmdir as rmdirInPool } from 'node:fs/promises'
import { errorMessage } from 'dsh-basics'
import { procFs } from '../linux/proc-source'

/**
 * The few synchronous filesystem operations cgroup handling needs (each is a single syscall on
 * cgroupfs, cheaper than a thread-pool hop). Tests inject an in-memory tree for layouts this host lacks.
 */
export interface CgroupFiles {
  /** Content of a small file, or `undefined` when it cannot be read. */
  read(path: string): string | undefined
  /** Write a whole control file; throws the system error. */
  write(path: string, text: string): void
  /** Create one directory (its parent must exist); an existing one is fine. Throws otherwise. */
  mkdir(path: string): void
  /** Remove one empty directory (a cgroup without processes or children); throws the system error. */
  rmdir(path: string): void
  /**
   * {@link rmdir} on the thread pool, so the event loop does not wait while the kernel does (it can
   * take several ms on a grace period). Optional: without it `rmdir` runs. Rejects with the system error.
   */
  rmdirInBackground?(path: string): Promise<void>
  /** Names of the subdirectories of `path` (`[]` when it cannot be listed). */
  subdirectories(path: string): string[]
  /** True when `path` exists. */
  exists(path: string): boolean
  /**
   * Open a single-value control file (`pids.current`) to be re-read from its start on every
   * {@link HeldFile.read} — one syscall, a fresh value each time. Optional (tests' trees do without);
   * `undefined` when it cannot be opened. Not for listings: a v1 `cgroup.procs` re-read on the same
   * descriptor may serve the list cached at an earlier read.
   */
  hold?(path: string): HeldFile | undefined
}

/** A control file kept open (see {@link CgroupFiles.hold}). */
export interface HeldFile {
  /** The file's content now, or `undefined` when it cannot be read. */
  read(): string | undefined
  /** Release the descriptor; later reads are `undefined`. */
  close(): void
}

const heldBuffer = Buffer.allocUnsafe(64)

/** The real filesystem. */
export const cgroupFs: CgroupFiles = {
  read(path) {
    // open/read/close: readFileSync's fstat-sized read takes several times as long on cgroupfs (sizes read as 0).
    return procFs.text(path)
  },
  write(path, text) {
    writeFileSync(path, text)
  },
  mkdir(path) {
    try {
      mkdirSync(path)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
  },
  rmdir(path) {
    rmdirSync(path)
  },
  rmdirInBackground(path) {
    return rmdirInPool(path)
  },
  subdirectories(path) {
    try {
      return readdirSync(path, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? [entry.name] : []))
    } catch {
      return []
    }
  },
  exists(path) {
    try {
      statSync(path)
      return true
    } catch {
      return false
    }
  },
  hold(path) {
    let fd: number | undefined
    try {
      fd = openSync(path, 'r')
    } catch {
      return undefined
    }
    return {
      read() {
        if (fd === undefined) return undefined
        try {
          return heldBuffer.toString('latin1', 0, readSync(fd, heldBuffer, 0, heldBuffer.length, 0))
        } catch {
          return undefined
        }
      },
      close() {
        if (fd !== undefined) closeSync(fd)
        fd = undefined
      },
    }
  },
}

/** The system error code of a failed operation (`EBUSY`, `ENOENT`, …), else the message. */
export function errorCode(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  return typeof code === 'string' ? code : errorMessage(error)
}
