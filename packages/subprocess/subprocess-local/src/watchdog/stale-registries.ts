import { lstatSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'

/** The prefix of a watchdog's registration directory, followed by its host's pid and a dash. */
export const REGISTRY_PREFIX = 'dsh-watchdog-'

/**
 * How old a dead host's directory must be before it is taken for litter: its watchdog, which removes
 * it after a sweep of at most a few seconds, is gone by then too.
 */
export const STALE_REGISTRY_MS = 60_000

/**
 * Remove registration directories in `dir` left by hosts that died together with their watchdog (a
 * process group or cgroup killed at once: nobody was left to remove them). Only real directories of
 * this uid whose host pid is not alive and that were not touched for {@link STALE_REGISTRY_MS} are
 * removed; anything else (a symlink, another user's entry, a live host's) is left alone. Returns
 * how many were removed.
 */
export function removeStaleRegistries(dir: string, now: number = Date.now()): number {
  const uid = process.getuid?.() ?? -1
  let removed = 0
  let entries: string[]
  try {
    entries = readdirSync(dir)
  } catch {
    return 0
  }
  for (const entry of entries) {
    const pid = hostPidOf(entry)
    if (pid === undefined || isAlive(pid)) continue
    const path = join(dir, entry)
    try {
      const stat = lstatSync(path)
      if (!stat.isDirectory() || stat.uid !== uid || now - stat.mtimeMs < STALE_REGISTRY_MS) continue
      rmSync(path, { recursive: true, force: true })
      removed += 1
    } catch {
      // Removed meanwhile by its watchdog or another host's sweep.
    }
  }
  return removed
}

/** The host pid in a registration directory's name (`dsh-watchdog-<pid>-<random>`), if it is one. */
function hostPidOf(entry: string): number | undefined {
  const match = /^dsh-watchdog-([1-9]\d{0,9})-[A-Za-z0-9]{6}$/.exec(entry)
  return match ? Number(match[1]) : undefined
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
