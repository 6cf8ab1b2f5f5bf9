import type { Dirent } from 'node:fs'
import { lstat, mkdir, readdir, readFile, realpath } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { isWithin } from 'dsh-sandbox'

/** Bound on the git directories one workspace is searched for (the repository, its submodules, worktrees). */
const MAX_GIT_DIRS = 64

/** What must stay fixed in a workspace's git metadata; see {@link gitProtections}. */
export interface GitProtections {
  /** Files and directories bound read-only: hooks, config, gitfiles and common-dir pointers. */
  readonly readOnly: string[]
  /** Git directories that must stay where they are (mount points cannot be renamed or replaced). */
  readonly pinned: string[]
}

/**
 * The parts of the workspace's git metadata whose change would run code outside the sandbox at
 * the user's next git command: `hooks/` (a missing one is created, as `git init` would), `config`
 * (`core.hooksPath`, `core.fsmonitor`, aliases, filters), `config.worktree`, `commondir`, and the
 * same in submodule git directories. Objects, refs, logs and the index stay writable, so commits
 * work. A `.git` file (worktree or submodule) is read-only, and the directory it names is covered
 * when it lies in the workspace.
 */
export async function gitProtections(workspaceRoot: string): Promise<GitProtections> {
  const found: GitProtections = { readOnly: [], pinned: [] }
  const visited = new Set<string>()
  const dotGit = join(workspaceRoot, '.git')
  const kind = await entryKind(dotGit)
  if (kind === 'directory') {
    found.pinned.push(dotGit)
    await protectGitDir(dotGit, workspaceRoot, found, visited, true)
  } else if (kind === 'file') {
    found.readOnly.push(dotGit)
    const target = await gitfileTarget(dotGit)
    if (target !== undefined && isWithin(workspaceRoot, target)) await protectGitDir(target, workspaceRoot, found, visited, false)
  } else if (kind === 'symlink') {
    const target = await canonical(dotGit)
    if (target !== undefined && isWithin(workspaceRoot, target)) await protectGitDir(target, workspaceRoot, found, visited, true)
  }
  return found
}

/**
 * Protect one git directory. `ownsHooks` is false for a linked worktree's directory, which uses
 * its common directory's hooks: no `hooks/` is created there.
 */
async function protectGitDir(gitDir: string, workspaceRoot: string, found: GitProtections, visited: Set<string>, ownsHooks: boolean): Promise<void> {
  if (visited.has(gitDir) || visited.size >= MAX_GIT_DIRS) return
  visited.add(gitDir)
  for (const name of ['config', 'config.worktree', 'commondir']) {
    const path = join(gitDir, name)
    if ((await entryKind(path)) === 'file') found.readOnly.push(path)
  }
  await protectHooks(join(gitDir, 'hooks'), workspaceRoot, found, ownsHooks)
  const common = await pointedDirectory(join(gitDir, 'commondir'), gitDir)
  if (common !== undefined && isWithin(workspaceRoot, common)) await protectGitDir(common, workspaceRoot, found, visited, true)
  for (const module of await subdirectories(join(gitDir, 'modules'))) {
    await protectGitDir(module, workspaceRoot, found, visited, true)
  }
  for (const worktree of await subdirectories(join(gitDir, 'worktrees'))) {
    await protectGitDir(worktree, workspaceRoot, found, visited, false)
  }
}

/** The hooks directory, created when missing (else the sandbox could create it with a hook inside). */
async function protectHooks(hooks: string, workspaceRoot: string, found: GitProtections, create: boolean): Promise<void> {
  let kind = await entryKind(hooks)
  if (kind === 'missing' && create) {
    await mkdir(hooks, { mode: 0o755 }).catch(() => undefined)
    kind = await entryKind(hooks)
  }
  if (kind === 'directory') {
    found.readOnly.push(hooks)
  } else if (kind === 'symlink') {
    const target = await canonical(hooks)
    if (target !== undefined && isWithin(workspaceRoot, target)) found.readOnly.push(target)
  }
}

/** The directory a `gitdir: <path>` file names, canonical; undefined when unreadable. */
async function gitfileTarget(gitfile: string): Promise<string | undefined> {
  const text = await readFile(gitfile, 'utf8').catch(() => '')
  const match = /^gitdir:\s*(.+?)\s*$/m.exec(text)
  return match?.[1] === undefined ? undefined : canonical(resolve(dirname(gitfile), match[1]))
}

/** The directory a one-line pointer file (`commondir`) names, relative to `base`; canonical. */
async function pointedDirectory(pointer: string, base: string): Promise<string | undefined> {
  const text = (await readFile(pointer, 'utf8').catch(() => '')).trim()
  return text === '' ? undefined : canonical(resolve(base, text))
}

/** Immediate subdirectories of `dir` that look like git directories (they hold a `config` or `HEAD`). */
async function subdirectories(dir: string): Promise<string[]> {
  let entries: Dirent[]
  try {
    entries = await readdir(dir, { withFileTypes: true })
  } catch {
    return []
  }
  const found: string[] = []
  for (const entry of entries.slice(0, MAX_GIT_DIRS)) {
    if (!entry.isDirectory()) continue
    const path = join(dir, entry.name)
    const head = await entryKind(join(path, 'HEAD'))
    if (head === 'file') found.push(path)
    // A nested submodule name (`a/b`) is a plain directory whose children are the git directories.
    else found.push(...(await subdirectories(path)))
  }
  return found
}

type EntryKind = 'directory' | 'file' | 'symlink' | 'other' | 'missing'

async function entryKind(path: string): Promise<EntryKind> {
  try {
    const info = await lstat(path)
    if (info.isSymbolicLink()) return 'symlink'
    if (info.isDirectory()) return 'directory'
    return info.isFile() ? 'file' : 'other'
  } catch {
    return 'missing'
  }
}

async function canonical(path: string): Promise<string | undefined> {
  return realpath(path).catch(() => undefined)
}
