import { Context } from '@deepseek-ai/cordis'
import { existsSync } from 'node:fs'
import { mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { Config, LocalSandbox } from 'dsh-sandbox-local'
import { bwrapUnavailable, run, scratchDir } from './helpers'
import { git, hasGit, IDENTITY, initRepository, snapshot } from './git-tree'

/**
 * Git metadata under real bubblewrap, as an attacker inside a writable workspace would shape it:
 * nested repositories, and links planted in `.git` that once made the host create directories
 * outside the workspace and walk the whole filesystem at every open.
 */

type Scratch = Awaited<ReturnType<typeof scratchDir>>
const root = new Context()
let workspace: Scratch
let outside: Scratch

/** Open a session in the workspace (a fresh confine, so a fresh search) and run `script` in it. */
async function open(script: string) {
  const argv = await root.sandbox.confine(['sh', '-c', script], { mode: 'workspace-write', workspaceRoot: workspace.path, cwd: workspace.path })
  return run(argv)
}

/** A write the sandbox must refuse: outside the workspace. Proves the sandbox still confines. */
async function expectConfined(): Promise<void> {
  const target = join(outside.path, 'written-from-inside')
  const result = await open(`echo x > '${target}' && echo WROTE`)
  expect(result.stdout).not.toContain('WROTE')
  expect(result.stderr).toContain('Read-only file system')
  expect(existsSync(target)).toBe(false)
}

/** Something that looks like a git directory without hooks: a host following a link to it would create one. */
async function plantCanary(dir: string): Promise<void> {
  await mkdir(join(dir, 'refs'), { recursive: true })
  await writeFile(join(dir, 'HEAD'), 'ref: refs/heads/main\n')
  await writeFile(join(dir, 'config'), '[core]\n')
}

const commit = (dir: string, file: string) =>
  `cd '${dir}' && echo change >> '${file}' && git ${IDENTITY.join(' ')} add '${file}' && git ${IDENTITY.join(' ')} commit -qm inside && echo COMMITTED`

describe.skipIf(bwrapUnavailable !== undefined || !hasGit)('git metadata under real bubblewrap', () => {
  beforeAll(async () => {
    await root.plugin(LocalSandbox, Config.parse({}))
  })

  beforeEach(async () => {
    workspace = await scratchDir('git-sandbox-ws', '/var/tmp')
    outside = await scratchDir('git-sandbox-outside', '/var/tmp')
    initRepository(workspace.path)
    await plantCanary(join(outside.path, 'sub'))
  })

  afterEach(async () => {
    await workspace?.remove()
    await outside?.remove()
  })

  for (const target of ['outside', '/'] as const) {
    it(`.git/modules linked to ${target === '/' ? '/' : 'a directory outside'}: every open works, creates nothing outside and confines`, async () => {
      const before = await snapshot(outside.path)
      await symlink(target === '/' ? '/' : outside.path, join(workspace.path, '.git', 'modules'))
      for (let attempt = 0; attempt < 3; attempt++) {
        const result = await open('echo ok > inside.txt && cat inside.txt')
        expect(result, `open ${attempt}`).toMatchObject({ code: 0, stdout: 'ok\n' })
      }
      await expectConfined()
      expect(await snapshot(outside.path)).toEqual(before)
      // The root's hooks stay protected: the link changed nothing there.
      expect((await open('echo x > .git/hooks/pre-commit && echo PLANTED')).stdout).not.toContain('PLANTED')
    })
  }

  it("a nested repository's hooks and config cannot be written; commits work in it and in the root", async () => {
    const nested = join(workspace.path, 'sub', 'repo')
    initRepository(nested)
    await writeFile(join(nested, 'n.txt'), 'n\n')
    const config = await readFile(join(nested, '.git', 'config'), 'utf8')
    const attack = await open(
      "printf '#!/bin/sh\\ntouch /var/tmp/hooked\\n' > sub/repo/.git/hooks/pre-commit && echo HOOK; " +
        'git -C sub/repo config core.fsmonitor "touch /var/tmp/fsmonitor" && echo CONFIG; ' +
        'echo "[core] hooksPath = /var/tmp" >> sub/repo/.git/config && echo APPENDED; ' +
        'mv sub/repo/.git/hooks sub/repo/.git/hooks-old && echo MOVED; echo end',
    )
    expect(attack.stdout).toBe('end\n')
    expect(existsSync(join(nested, '.git', 'hooks', 'pre-commit'))).toBe(false)
    expect(await readFile(join(nested, '.git', 'config'), 'utf8')).toBe(config)
    const commits = await open(`(${commit(join(workspace.path, 'sub', 'repo'), 'n.txt')}) && (${commit(workspace.path, 'root.txt')})`)
    expect(commits.stdout).toBe('COMMITTED\nCOMMITTED\n')
    expect(git(['log', '--format=%s'], nested)).toBe('inside\nfirst\n')
    expect(git(['log', '--format=%s'], workspace.path)).toBe('inside\nfirst\n')
  })

  it("a nested repository's hooks linked into the workspace: the target is read-only inside", async () => {
    const nested = join(workspace.path, 'lib')
    initRepository(nested)
    await mkdir(join(workspace.path, 'shared-hooks'))
    await rm(join(nested, '.git', 'hooks'), { recursive: true })
    await symlink('../../shared-hooks', join(nested, '.git', 'hooks'))
    const result = await open("printf '#!/bin/sh\\n' > shared-hooks/pre-commit && echo PLANTED; echo ok > lib/file && echo WRITABLE")
    expect(result.stdout).toBe('WRITABLE\n')
    expect(existsSync(join(workspace.path, 'shared-hooks', 'pre-commit'))).toBe(false)
  })

  it('a root .git that is a link to a repository outside: the open works, creates nothing outside and confines', async () => {
    const before = await snapshot(outside.path)
    await rm(join(workspace.path, '.git'), { recursive: true })
    await symlink(join(outside.path, 'sub'), join(workspace.path, '.git'))
    expect(await open('echo ok')).toMatchObject({ code: 0, stdout: 'ok\n' })
    expect((await open('mkdir .git/hooks && echo MADE')).stdout).not.toContain('MADE')
    await expectConfined()
    expect(await snapshot(outside.path)).toEqual(before)
  })

  it('a root .git that is a link to a git directory inside the workspace: that directory is protected', async () => {
    await rm(join(workspace.path, '.git'), { recursive: true })
    initRepository(join(workspace.path, 'store'))
    await symlink('store/.git', join(workspace.path, '.git'))
    const result = await open("echo x > .git/hooks/pre-commit && echo HOOK; echo '[core]' >> .git/config && echo CONFIG; echo end")
    expect(result.stdout).toBe('end\n')
  })

  it('.git/hooks linked out of the workspace: the open works, nothing is created there, and it stays read-only', async () => {
    const before = await snapshot(outside.path)
    await rm(join(workspace.path, '.git', 'hooks'), { recursive: true })
    await symlink(join(outside.path, 'sub'), join(workspace.path, '.git', 'hooks'))
    for (let attempt = 0; attempt < 2; attempt++) expect(await open('echo ok')).toMatchObject({ code: 0, stdout: 'ok\n' })
    expect((await open('echo x > .git/hooks/pre-commit && echo PLANTED')).stdout).not.toContain('PLANTED')
    await expectConfined()
    expect(await snapshot(outside.path)).toEqual(before)
  })

  it('a gitfile pointing outside the workspace: nothing is created there, the gitfile is read-only inside', async () => {
    const before = await snapshot(outside.path)
    await mkdir(join(workspace.path, 'checkout'))
    const gitfile = join(workspace.path, 'checkout', '.git')
    await writeFile(gitfile, `gitdir: ${join(outside.path, 'sub')}\n`)
    const result = await open(`echo 'gitdir: /var/tmp/forged' > checkout/.git && echo REWRITTEN; echo ok`)
    expect(result.stdout).toBe('ok\n')
    expect(await readFile(gitfile, 'utf8')).toBe(`gitdir: ${join(outside.path, 'sub')}\n`)
    await expectConfined()
    expect(await snapshot(outside.path)).toEqual(before)
  })
})
