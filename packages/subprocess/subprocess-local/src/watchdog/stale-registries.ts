import { removeOrphanDirectories } from 'dsh-basics'

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
  return removeOrphanDirectories(dir, /^dsh-watchdog-([1-9]\d{0,9})-[A-Za-z0-9]{6}$/, STALE_REGISTRY_MS, now)
}
