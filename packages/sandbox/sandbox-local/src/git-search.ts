import { join } from 'node:path'
import { readEntries } from './no-follow'
import type { SearchTrace } from './search-trace'

/**
 * Bounds on the host's search of a workspace for git metadata, before every session open. The
 * host runs it as root over a tree the sandbox may have shaped, so time and reach are bounded.
 */
export interface GitSearchLimits {
  /** Directory entries read in all, each directory opened counting as one more (the walk for nested repositories and submodule listings). */
  readonly maxEntries: number
  /** Levels of directories below the workspace root the walk descends (the root is level 0). */
  readonly maxDepth: number
  /** Git directories protected per workspace (the root's, nested ones, submodules, worktrees). */
  readonly maxGitDirs: number
}

/**
 * The defaults: well under a second of directory reading even on a loaded two-core machine, deep
 * enough for `vendor/…`, `third_party/…` and package-manager trees, and room for many submodules.
 */
export const DEFAULT_GIT_SEARCH_LIMITS: GitSearchLimits = { maxEntries: 20_000, maxDepth: 10, maxGitDirs: 64 }

/** Counts what one search read, so every part of it draws on the same bound. */
export class SearchBudget {
  entries = 0
  complete = true

  constructor(readonly limits: GitSearchLimits) {}

  /** Take one directory entry; false (and the search incomplete) once the bound is reached. */
  take(): boolean {
    if (this.entries >= this.limits.maxEntries) {
      this.complete = false
      return false
    }
    this.entries++
    return true
  }

  /** Whether the bound on entries is reached. */
  get exhausted(): boolean {
    return this.entries >= this.limits.maxEntries
  }
}

/**
 * Every entry named `.git` below `root` (not `root/.git` itself), breadth first so the shallow
 * ones come first, without following links and without entering a `.git` directory. Names are
 * not skipped (a repository under `node_modules` runs hooks as well as any); the budget bounds it.
 */
export async function findNestedGitEntries(root: string, budget: SearchBudget, trace?: SearchTrace): Promise<string[]> {
  const found: string[] = []
  let level = [root]
  let opened = 0
  for (let depth = 0; level.length > 0; depth++) {
    const next: string[] = []
    for (const dir of level) {
      if (budget.exhausted) {
        budget.complete = false
        return found
      }
      // The steps are synchronous (see no-follow): a large workspace lets the event loop run between batches.
      if (++opened % DIRECTORIES_PER_TURN === 0) await new Promise((resolve) => setImmediate(resolve))
      trace?.record(dir)
      await readEntries(
        root,
        dir,
        () => budget.take(),
        (entry) => {
          const path = join(dir, entry.name)
          if (entry.name === '.git') {
            if (dir !== root) found.push(path)
          } else if (entry.isDirectory) {
            next.push(path)
          }
        },
      )
    }
    if (depth >= budget.limits.maxDepth) {
      if (next.length > 0) budget.complete = false
      break
    }
    level = next
  }
  return found
}

/** Directories the walk reads before it yields to the event loop: a few milliseconds of work at most. */
const DIRECTORIES_PER_TURN = 64

/** Workspaces whose nested `.git` entries are remembered; the oldest is forgotten beyond this. */
const REMEMBERED_WORKSPACES = 256

const remembered = new Map<string, Set<string>>()

/**
 * Nested `.git` entries earlier searches of this workspace found in this host process. Checked
 * again at every open before the walk, so a sandbox that floods the workspace with entries cannot
 * push a repository the host already knew beyond the walk's bound.
 */
export function rememberedGitEntries(root: string): string[] {
  return [...(remembered.get(root) ?? [])]
}

/** Remember nested `.git` entries found in `root`, at most `limit` per workspace. */
export function rememberGitEntries(root: string, entries: readonly string[], limit: number): void {
  const known = remembered.get(root) ?? new Set<string>()
  for (const entry of entries) if (known.size < limit) known.add(entry)
  remembered.delete(root)
  remembered.set(root, known)
  if (remembered.size > REMEMBERED_WORKSPACES) remembered.delete(remembered.keys().next().value as string)
}
