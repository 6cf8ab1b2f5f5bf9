import { mkdirSync, readdirSync, readFileSync, rmdirSync, statSync, writeFileSync } from 'node:fs'
import { errorMessage } from 'dsh-basics'

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
  /** Names of the subdirectories of `path` (`[]` when it cannot be listed). */
  subdirectories(path: string): string[]
  /** True when `path` exists. */
  exists(path: string): boolean
}

/** The real filesystem. */
export const cgroupFs: CgroupFiles = {
  read(path) {
    try {
      return readFileSync(path, 'latin1')
    } catch {
      return undefined
    }
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
}

/** The system error code of a failed operation (`EBUSY`, `ENOENT`, …), else the message. */
export function errorCode(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  return typeof code === 'string' ? code : errorMessage(error)
}
