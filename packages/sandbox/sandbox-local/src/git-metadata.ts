import { realpath } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { isWithin } from 'dsh-sandbox'
import { DEFAULT_GIT_SEARCH_LIMITS, findNestedGitEntries, type GitSearchLimits, rememberedGitEntries, rememberGitEntries, SearchBudget } from './git-search'
import { createDirectoryIn, entryKind, type EntryKind, readEntries, readPointerFile } from './no-follow'
import type { SearchTrace } from './search-trace'

/** What must stay fixed in a workspace's git metadata; see {@link gitProtections}. */
export interface GitProtections {
  /** Files and directories bound read-only: hooks, config, gitfiles and common-dir pointers. Canonical, inside the workspace. */
  readonly readOnly: string[]
  /** Git directories that must stay where they are (mount points cannot be renamed or replaced). */
  readonly pinned: string[]
  /** How much the search read, and whether it saw the whole workspace within its bounds. */
  readonly search: { readonly entries: number; readonly complete: boolean }
}

/** Files of a git directory whose content decides what code git runs: read-only when present. */
const CODE_FILES = ['config', 'config.worktree', 'commondir']

/** Levels of submodule names with a slash (`modules/a/b`) looked through for git directories. */
const SUBMODULE_NAME_LEVELS = 4

/**
 * The parts of the workspace's git metadata whose change would run code outside the sandbox at
 * the user's next git command: `hooks/` (a missing one is created, as `git init` would), `config`,
 * `config.worktree`, `commondir`, in the root's `.git`, in every `.git` found below it (nested
 * repositories, submodule checkouts), and in the git directories these lead to inside the
 * workspace. Objects, refs, logs and the index stay writable. Nothing is followed out of the
 * workspace, nothing is created through a link, and the search is bounded by `limits`.
 */
export async function gitProtections(workspaceRoot: string, limits: GitSearchLimits = DEFAULT_GIT_SEARCH_LIMITS, trace?: SearchTrace): Promise<GitProtections> {
  const search = new GitMetadataSearch(workspaceRoot, limits, trace)
  const rootEntry = join(workspaceRoot, '.git')
  // Only the root's `.git` is pinned: see the package README ("Nested repositories").
  if ((await search.kind(rootEntry)) === 'directory') search.pinned.add(rootEntry)
  await search.protectEntry(rootEntry)
  // Entries found at earlier opens come first, so a flood of new entries cannot crowd them out.
  const known = rememberedGitEntries(workspaceRoot)
  for (const entry of known) await search.protectEntry(entry)
  const found = await findNestedGitEntries(workspaceRoot, search.budget, trace)
  for (const entry of found) await search.protectEntry(entry)
  rememberGitEntries(workspaceRoot, found, limits.maxGitDirs)
  if (!search.budget.complete) trace?.giveUp('the search reached its bound')
  return {
    readOnly: [...search.readOnly],
    pinned: [...search.pinned],
    search: { entries: search.budget.entries, complete: search.budget.complete },
  }
}

/** One search's state: what it found, what it visited, and the budget it draws on. */
class GitMetadataSearch {
  readonly readOnly = new Set<string>()
  readonly pinned = new Set<string>()
  readonly budget: SearchBudget
  private readonly visited = new Set<string>()

  constructor(
    private readonly root: string,
    limits: GitSearchLimits,
    private readonly trace: SearchTrace | undefined,
  ) {
    this.budget = new SearchBudget(limits)
  }

  /** The kind of `path`, recorded in the trace first (a warm sandbox re-checks it when taken). */
  kind(path: string): Promise<EntryKind> {
    this.trace?.record(path)
    return entryKind(path)
  }

  /** A `.git` entry: a git directory, a gitfile naming one, or a link to one. */
  async protectEntry(entry: string): Promise<void> {
    const kind = await this.kind(entry)
    if (kind === 'directory') return this.protectGitDir(entry)
    // What a pointer or a link leads to is not re-checked by a trace: such a workspace opens cold.
    if (kind === 'file' || kind === 'symlink') this.trace?.giveUp(`${entry} is a gitfile or a link`)
    if (kind === 'file') {
      this.readOnly.add(entry)
      const text = await readPointerFile(entry)
      const match = text === undefined ? null : /^gitdir:\s*(.+?)\s*$/m.exec(text)
      if (match?.[1] !== undefined) await this.protectGitDirAt(resolve(dirname(entry), match[1]))
    } else if (kind === 'symlink') {
      // The link itself cannot become a mount point; its target inside the workspace is protected.
      await this.protectGitDirAt(entry)
    }
  }

  /** The git directory `path` leads to, when that is a directory inside the workspace. */
  private async protectGitDirAt(path: string): Promise<void> {
    const target = await this.insideTarget(path)
    if (target !== undefined && (await entryKind(target)) === 'directory') await this.protectGitDir(target)
  }

  /** Protect one git directory (canonical, inside the workspace) and those it leads to. */
  private async protectGitDir(gitDir: string): Promise<void> {
    if (this.visited.has(gitDir)) return
    if (this.visited.size >= this.budget.limits.maxGitDirs) {
      this.budget.complete = false
      return
    }
    this.visited.add(gitDir)
    this.trace?.record(gitDir)
    for (const name of CODE_FILES) await this.protectPath(join(gitDir, name))
    // A git directory with a common directory (a linked worktree's) uses that one's hooks.
    const ownsHooks = (await this.kind(join(gitDir, 'commondir'))) === 'missing'
    if (!ownsHooks) this.trace?.giveUp(`${gitDir} has a commondir`)
    if (ownsHooks && (await this.kind(join(gitDir, 'hooks'))) === 'missing') {
      // The search changes a directory it recorded: the next search records it as it is then.
      this.trace?.giveUp(`${gitDir}/hooks was created`)
      // Else the sandbox could create it with a hook inside. Never through a link (see no-follow).
      await createDirectoryIn(this.root, gitDir, 'hooks')
    }
    await this.protectPath(join(gitDir, 'hooks'))
    const common = (await readPointerFile(join(gitDir, 'commondir')))?.trim()
    if (common) await this.protectGitDirAt(resolve(gitDir, common))
    for (const module of await this.gitDirsUnder(join(gitDir, 'modules'), SUBMODULE_NAME_LEVELS)) await this.protectGitDir(module)
    for (const worktree of await this.gitDirsUnder(join(gitDir, 'worktrees'), 1)) await this.protectGitDir(worktree)
  }

  /**
   * Read-only: the entry itself when it is a file or directory, or, when it is a link, its target
   * if that lies inside the workspace (outside it, everything is read-only already).
   */
  private async protectPath(path: string): Promise<void> {
    const kind = await this.kind(path)
    if (kind === 'file' || kind === 'directory') {
      this.readOnly.add(path)
    } else if (kind === 'symlink') {
      this.trace?.giveUp(`${path} is a link`)
      const target = await this.insideTarget(path)
      const targetKind = target === undefined ? 'missing' : await entryKind(target)
      if (target !== undefined && (targetKind === 'file' || targetKind === 'directory')) this.readOnly.add(target)
    }
  }

  /**
   * Git directories (they hold a `HEAD` file) below `dir`, looking `levels` deep for names with
   * slashes. A `dir` that is a link is not entered: what it leads to outside is read-only anyway.
   */
  private async gitDirsUnder(dir: string, levels: number): Promise<string[]> {
    const children: string[] = []
    this.trace?.record(dir)
    await readEntries(
      this.root,
      dir,
      () => this.budget.take(),
      (entry) => {
        if (entry.isDirectory) children.push(join(dir, entry.name))
      },
    )
    const found: string[] = []
    for (const child of children) {
      if ((await this.kind(join(child, 'HEAD'))) === 'file') found.push(child)
      else if (levels > 1) found.push(...(await this.gitDirsUnder(child, levels - 1)))
    }
    return found
  }

  /** The canonical target of `path` when it lies inside the workspace; resolving creates nothing. */
  private async insideTarget(path: string): Promise<string | undefined> {
    const target = await realpath(path).catch(() => undefined)
    return target !== undefined && isWithin(this.root, target) ? target : undefined
  }
}
