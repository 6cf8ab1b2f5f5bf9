import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { gitProtections } from '../src/git-metadata'
import { DEFAULT_GIT_SEARCH_LIMITS } from '../src/git-search'
import { createDirectoryIn } from '../src/no-follow'
import { scratchDir } from './helpers'
import { hasGit, initRepository, snapshot } from './git-tree'

/**
 * The host's search of a workspace for git metadata, run as root over a tree a sandbox shaped:
 * real files, planted links and FIFOs, no bubblewrap (test/git-sandbox.test.ts runs the sandbox).
 */

type Scratch = Awaited<ReturnType<typeof scratchDir>>
let workspace: Scratch
let outside: Scratch

/** A directory that looks like a git directory without hooks: following a link to it would create `hooks/` there. */
async function plantCanary(dir: string): Promise<void> {
  await mkdir(join(dir, 'objects'), { recursive: true })
  await writeFile(join(dir, 'HEAD'), 'ref: refs/heads/main\n')
  await writeFile(join(dir, 'config'), '[core]\n')
}

function outsideWorkspace(paths: readonly string[]): string[] {
  return paths.filter((path) => path !== workspace.path && !path.startsWith(`${workspace.path}/`))
}

describe.skipIf(process.platform !== 'linux' || !hasGit)('git metadata search (real files, no sandbox)', () => {
  beforeEach(async () => {
    workspace = await scratchDir('git-ws', '/var/tmp')
    outside = await scratchDir('git-outside', '/var/tmp')
    initRepository(workspace.path)
    await plantCanary(join(outside.path, 'sub'))
    await plantCanary(join(outside.path, 'nested', 'deeper'))
  })

  afterEach(async () => {
    await workspace?.remove()
    await outside?.remove()
  })

  it('.git/modules linked to a directory outside: nothing is created there, nothing outside is returned, later searches agree', async () => {
    const before = await snapshot(outside.path)
    await symlink(outside.path, join(workspace.path, '.git', 'modules'))
    for (let open = 0; open < 3; open++) {
      const found = await gitProtections(workspace.path)
      expect(outsideWorkspace([...found.readOnly, ...found.pinned])).toEqual([])
      expect(found.readOnly).toContain(join(workspace.path, '.git', 'hooks'))
      expect(found.pinned).toEqual([join(workspace.path, '.git')])
    }
    expect(await snapshot(outside.path)).toEqual(before)
    expect(existsSync(join(outside.path, 'sub', 'hooks'))).toBe(false)
  })

  it('.git/modules and .git/worktrees linked to /: the search reads only the workspace', async () => {
    await symlink('/', join(workspace.path, '.git', 'modules'))
    await symlink('/', join(workspace.path, '.git', 'worktrees'))
    await writeFile(join(workspace.path, 'a.txt'), 'a\n')
    const found = await gitProtections(workspace.path)
    // The workspace root opened, and its `.git` and `a.txt` read: not a filesystem walk.
    expect(found.search).toEqual({ entries: 3, complete: true })
    expect(outsideWorkspace(found.readOnly)).toEqual([])
  })

  it('a nested repository is protected like the root one; its .git is not pinned', async () => {
    const nested = join(workspace.path, 'sub', 'repo')
    initRepository(nested)
    await rm(join(nested, '.git', 'hooks'), { recursive: true })
    const found = await gitProtections(workspace.path)
    expect(found.readOnly).toEqual(expect.arrayContaining([join(nested, '.git', 'config'), join(nested, '.git', 'hooks')]))
    expect(existsSync(join(nested, '.git', 'hooks'))).toBe(true)
    expect(found.pinned).toEqual([join(workspace.path, '.git')])
  })

  it('a submodule checkout: its gitfile and the git directory it names are protected, nested submodule names too', async () => {
    const moduleDir = join(workspace.path, '.git', 'modules', 'group', 'lib')
    await plantCanary(moduleDir)
    await mkdir(join(workspace.path, 'group', 'lib'), { recursive: true })
    await writeFile(join(workspace.path, 'group', 'lib', '.git'), 'gitdir: ../../.git/modules/group/lib\n')
    const found = await gitProtections(workspace.path)
    expect(found.readOnly).toEqual(expect.arrayContaining([join(workspace.path, 'group', 'lib', '.git'), join(moduleDir, 'config'), join(moduleDir, 'hooks')]))
  })

  it('gitfiles and commondir pointing outside, directly or through a link, are not followed for creation', async () => {
    await mkdir(join(workspace.path, 'a'))
    await writeFile(join(workspace.path, 'a', '.git'), `gitdir: ${join(outside.path, 'sub')}\n`)
    await symlink(join(outside.path, 'nested'), join(workspace.path, 'way-out'))
    await mkdir(join(workspace.path, 'b'))
    await writeFile(join(workspace.path, 'b', '.git'), 'gitdir: ../way-out/deeper\n')
    await writeFile(join(workspace.path, '.git', 'commondir'), `${join(outside.path, 'sub')}\n`)
    const before = await snapshot(outside.path)
    const found = await gitProtections(workspace.path)
    expect(await snapshot(outside.path)).toEqual(before)
    expect(outsideWorkspace(found.readOnly)).toEqual([])
    expect(found.readOnly).toEqual(expect.arrayContaining([join(workspace.path, 'a', '.git'), join(workspace.path, 'b', '.git')]))
  })

  it('a .git link, a hooks link and a config link: targets inside the workspace are protected, targets outside are left alone', async () => {
    const inner = join(workspace.path, 'inner')
    initRepository(inner)
    await mkdir(join(workspace.path, 'shared-hooks'))
    await rm(join(inner, '.git', 'hooks'), { recursive: true })
    await symlink('../../shared-hooks', join(inner, '.git', 'hooks'))
    await mkdir(join(workspace.path, 'linked'))
    await symlink('../inner/.git', join(workspace.path, 'linked', '.git'))
    await mkdir(join(workspace.path, 'out'))
    await symlink(join(outside.path, 'sub'), join(workspace.path, 'out', '.git'))
    await rm(join(workspace.path, '.git', 'hooks'), { recursive: true })
    await symlink(join(outside.path, 'nested'), join(workspace.path, '.git', 'hooks'))
    const before = await snapshot(outside.path)
    const found = await gitProtections(workspace.path)
    expect(await snapshot(outside.path)).toEqual(before)
    expect(found.readOnly).toEqual(expect.arrayContaining([join(workspace.path, 'shared-hooks'), join(inner, '.git', 'config')]))
    expect(outsideWorkspace(found.readOnly)).toEqual([])
    // No hooks/ was created in place of the links.
    expect(await snapshot(join(workspace.path, 'shared-hooks'))).toEqual([])
  })

  it('a FIFO planted as a gitfile or commondir does not block the search', async () => {
    await mkdir(join(workspace.path, 'fifo'))
    execFileSync('mkfifo', [join(workspace.path, 'fifo', '.git'), join(workspace.path, '.git', 'commondir')])
    const found = await gitProtections(workspace.path)
    expect(found.readOnly).toContain(join(workspace.path, '.git', 'config'))
  })

  it('the walk stops at its bounds on entries and depth, and says so', async () => {
    await mkdir(join(workspace.path, 'many'))
    await Promise.all(Array.from({ length: 150 }, (_, index) => writeFile(join(workspace.path, 'many', `f${index}`), '')))
    const bounded = await gitProtections(workspace.path, { ...DEFAULT_GIT_SEARCH_LIMITS, maxEntries: 100 })
    expect(bounded.search).toEqual({ entries: 100, complete: false })
    const deep = join(workspace.path, 'd1', 'd2', 'd3')
    initRepository(deep)
    const shallow = await gitProtections(workspace.path, { ...DEFAULT_GIT_SEARCH_LIMITS, maxDepth: 2 })
    expect(shallow.search.complete).toBe(false)
    expect(shallow.readOnly).not.toContain(join(deep, '.git', 'config'))
    const full = await gitProtections(workspace.path)
    expect(full.search.complete).toBe(true)
    expect(full.readOnly).toContain(join(deep, '.git', 'config'))
  })

  it('a repository found at an earlier open stays protected when a flood pushes it beyond the bound', async () => {
    const nested = join(workspace.path, 'zz', 'repo')
    initRepository(nested)
    expect((await gitProtections(workspace.path)).readOnly).toContain(join(nested, '.git', 'hooks'))
    await mkdir(join(workspace.path, 'flood'))
    await Promise.all(Array.from({ length: 200 }, (_, index) => mkdir(join(workspace.path, 'flood', `d${index}`))))
    const flooded = await gitProtections(workspace.path, { ...DEFAULT_GIT_SEARCH_LIMITS, maxEntries: 50 })
    expect(flooded.search.complete).toBe(false)
    expect(flooded.readOnly).toContain(join(nested, '.git', 'hooks'))
  })

  it('creating a directory refuses a way through a link, even when the link is not the last component', async () => {
    await symlink(outside.path, join(workspace.path, 'link'))
    expect(await createDirectoryIn(workspace.path, join(workspace.path, 'link', 'sub'), 'hooks')).toBe(false)
    expect(await createDirectoryIn(workspace.path, join(workspace.path, 'link'), 'hooks')).toBe(false)
    expect(await createDirectoryIn(workspace.path, outside.path, 'hooks')).toBe(false)
    expect(existsSync(join(outside.path, 'sub', 'hooks'))).toBe(false)
    expect(existsSync(join(outside.path, 'hooks'))).toBe(false)
    expect(await createDirectoryIn(workspace.path, workspace.path, 'made')).toBe(true)
    expect(existsSync(join(workspace.path, 'made'))).toBe(true)
  })
})
