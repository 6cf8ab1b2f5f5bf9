import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs'

/** Device and inode of the file an fd link points at. */
export interface FileIdentity {
  /** Device number of a device file (0 for other files). */
  readonly rdev: number
  /** Inode number. */
  readonly ino: number
}

/**
 * The handful of /proc reads the Linux inspector makes. Every read is small and targeted; a
 * missing or unreadable file is `undefined`, never an exception. Fixture tests provide their own.
 */
export interface ProcSource {
  /** Whole content of a small text file (stat, status, syscall, children, fdinfo). */
  text(path: string): string | undefined
  /** Entry names of a directory (`/proc`, `/proc/<pid>/task`). */
  list(path: string): string[] | undefined
  /** `length` bytes at `offset` of a file (process memory); `undefined` unless all were read. */
  bytes(path: string, offset: number, length: number): Buffer | undefined
  /** Identity of the file behind a link such as `/proc/<pid>/fd/<n>`. */
  file(path: string): FileIdentity | undefined
}

const buffer = Buffer.allocUnsafe(16 * 1024)

/** The real /proc, read synchronously: each read is a few microseconds, cheaper than a thread-pool hop. */
export const procFs: ProcSource = {
  text(path) {
    let fd: number
    try {
      fd = openSync(path, 'r')
    } catch {
      return undefined
    }
    try {
      const chunks: Buffer[] = []
      for (;;) {
        const count = readSync(fd, buffer, 0, buffer.length, null)
        if (count === 0) break
        chunks.push(Buffer.from(buffer.subarray(0, count)))
      }
      return Buffer.concat(chunks).toString('latin1')
    } catch {
      return undefined
    } finally {
      closeSync(fd)
    }
  },
  list(path) {
    try {
      return readdirSync(path)
    } catch {
      return undefined
    }
  },
  bytes(path, offset, length) {
    let fd: number
    try {
      fd = openSync(path, 'r')
    } catch {
      return undefined
    }
    try {
      const out = Buffer.alloc(length)
      let filled = 0
      while (filled < length) {
        const count = readSync(fd, out, filled, length - filled, offset + filled)
        if (count === 0) return undefined
        filled += count
      }
      return out
    } catch {
      return undefined
    } finally {
      closeSync(fd)
    }
  },
  file(path) {
    try {
      const stats = statSync(path)
      return { rdev: stats.rdev, ino: stats.ino }
    } catch {
      return undefined
    }
  },
}

/** Clock ticks per second for /proc times (USER_HZ, 100 on every Linux ABI Node supports). */
export const CLOCK_TICKS_PER_SECOND = 100

/** Seconds since boot from `/proc/uptime`, as clock ticks rounded up; `undefined` if unreadable. */
export function uptimeTicks(source: ProcSource): number | undefined {
  const seconds = uptimeSeconds(source)
  return seconds === undefined ? undefined : Math.ceil(seconds * CLOCK_TICKS_PER_SECOND)
}

/** Seconds since boot from `/proc/uptime` (the clock `starttime` counts on), 10 ms resolution. */
export function uptimeSeconds(source: ProcSource): number | undefined {
  const text = source.text('/proc/uptime')
  const seconds = text === undefined ? Number.NaN : Number.parseFloat(text)
  return Number.isFinite(seconds) ? seconds : undefined
}
