import { type BigIntStats, lstatSync } from 'node:fs'

/**
 * A change this close (in ms) before a path was looked at may share its timestamp with a later
 * one: the kernel stamps files from a coarse clock (one tick is 1–10 ms), and some filesystems are
 * coarser still. A trace that saw such a recent change is never trusted.
 */
export const RACY_CHANGE_MS = 1000

/** A trace records no more paths than this; a larger workspace search is not worth re-checking at every open. */
export const MAX_TRACED_PATHS = 512

/** What `lstat` showed of one path, or that it was missing. */
type Seen = string

/**
 * What the git-metadata search looked at, recorded before each look: the kind, inode, size and
 * change times of every directory it listed and every entry it asked about. If all of them still
 * show the same, the search would find the same now. A search that followed a link, read a
 * pointer file's target, created a directory, or ran out of budget cannot be re-checked this way:
 * the trace is then {@link SearchTrace.usable | unusable}.
 */
export class SearchTrace {
  readonly #seen = new Map<string, Seen>()
  readonly #since = Date.now()
  #unusable: string | undefined

  /** Record `path` as it is now, before the search reads it (a change after this shows as a difference). */
  record(path: string): void {
    if (this.#seen.has(path)) return
    if (this.#seen.size >= MAX_TRACED_PATHS) return this.giveUp('the search looked at too many paths')
    const stats = lstatOrUndefined(path)
    if (stats !== undefined && Number(stats.ctimeMs) > this.#since - RACY_CHANGE_MS) return this.giveUp(`${path} changed just before`)
    this.#seen.set(path, describe(stats))
  }

  /** The search did something a trace cannot re-check (see the class); `why` is kept for diagnostics. */
  giveUp(why: string): void {
    this.#unusable ??= why
  }

  /** Whether the trace can stand for the search; see {@link unusableBecause}. */
  get usable(): boolean {
    return this.#unusable === undefined
  }

  /** Why it cannot, when it cannot. */
  get unusableBecause(): string | undefined {
    return this.#unusable
  }

  /** True when the trace is usable and every recorded path still shows exactly what it showed. */
  matches(): boolean {
    if (!this.usable) return false
    for (const [path, seen] of this.#seen) if (describe(lstatOrUndefined(path)) !== seen) return false
    return true
  }
}

function lstatOrUndefined(path: string): BigIntStats | undefined {
  try {
    return lstatSync(path, { bigint: true })
  } catch {
    return undefined
  }
}

function describe(stats: BigIntStats | undefined): Seen {
  if (stats === undefined) return 'missing'
  return `${stats.mode}:${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`
}
