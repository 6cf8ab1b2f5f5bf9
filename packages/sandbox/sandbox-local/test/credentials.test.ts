import { Context } from '@deepseek-ai/cordis'
import { readdirSync, readFileSync, symlinkSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SandboxPolicy } from 'dsh-sandbox'
import { Config, LocalSandbox } from 'dsh-sandbox-local'
import { bwrapUnavailable, run, scratchDir } from './helpers'
import { CREDENTIAL_FILES, plantHome, SECRET, snapshot } from './home-fixture'

/**
 * Credentials out of reach, with real bubblewrap, as root: every credential path of a planted home,
 * `/etc/shadow` and `/root` cannot be read inside by cat, ls or python, also through a link in the
 * workspace or /proc/<pid>/root; `readablePaths` opens them on purpose.
 */

type Scratch = Awaited<ReturnType<typeof scratchDir>>
const isRoot = process.getuid?.() === 0
let base: Scratch
let homes: Scratch
let workspace: Scratch
let home: string
const masked = new Context()
const opened = new Context()

class PlantedHomeSandbox extends LocalSandbox {
  protected override hostHome(): string {
    return home
  }
}

/** The system's credentials this host has, and /root as root. */
const SYSTEM_PATHS = ['/etc/shadow', '/etc/gshadow'].filter((path) => readdirSync('/etc').includes(path.slice(5)))

/** Try every way of reading `path` a model would: cat (a file), ls (a directory), python's open. */
function readAttempts(path: string): string {
  const quoted = `'${path}'`
  return [
    `cat ${quoted} 2>/dev/null`,
    `ls -A ${quoted} 2>/dev/null`,
    `find ${quoted} -type f -exec cat {} + 2>/dev/null`,
    `python3 -c "import sys; print(open(sys.argv[1]).read())" ${quoted} 2>/dev/null`,
  ].join('; ')
}

async function sh(context: Context, script: string, policy: Partial<SandboxPolicy> = {}) {
  const full: SandboxPolicy = { mode: 'workspace-write', workspaceRoot: workspace.path, cwd: workspace.path, ...policy }
  return run(await context.sandbox.confine(['env', `HOME=${home}`, 'sh', '-c', `${script}; echo DONE`], full))
}

describe.skipIf(bwrapUnavailable !== undefined)('credentials out of reach, with real bubblewrap', () => {
  let before: Record<string, string>
  beforeAll(async () => {
    base = await scratchDir('cred-base', '/var/tmp')
    homes = await scratchDir('cred-state', '/var/tmp')
    workspace = await scratchDir('cred-ws', '/var/tmp')
    home = join(base.path, 'home')
    await mkdir(home)
    plantHome(home)
    before = snapshot(home)
    await masked.plugin(PlantedHomeSandbox, Config.parse({ homesDirectory: homes.path }))
    const readablePaths = [...Object.keys(CREDENTIAL_FILES).map((path) => `~/${path}`), ...SYSTEM_PATHS, '/root']
    await opened.plugin(PlantedHomeSandbox, Config.parse({ homesDirectory: homes.path, readablePaths }))
  })

  afterAll(async () => {
    await base?.remove()
    await homes?.remove()
    await workspace?.remove()
  })

  const homePaths = () => Object.keys(CREDENTIAL_FILES).map((path) => join(home, path))
  const shadowLine = () => readFileSync('/etc/shadow', 'utf8').split('\n')[0]!

  it.each([
    ['workspace-write, private home', 'workspace-write' as const, () => workspace.path],
    ['read-only, private home', 'read-only' as const, () => workspace.path],
    // The workspace holds the home: it is not replaced, so every credential in it is masked.
    ['read-only, a workspace holding the home', 'read-only' as const, () => base.path],
    ['workspace-write, the home as workspace', 'workspace-write' as const, () => home],
  ])('%s: no credential can be read, by cat, ls, find or python', async (_, mode, workspaceRoot) => {
    for (const path of [...homePaths(), ...SYSTEM_PATHS]) {
      const result = await sh(masked, readAttempts(path), { mode, workspaceRoot: workspaceRoot(), cwd: workspaceRoot() })
      expect(result.stdout, path).not.toContain(SECRET)
      expect(result.stdout, path).not.toContain(shadowLine())
      expect(result.stdout.endsWith('DONE\n'), path).toBe(true)
    }
    if (isRoot) expect((await sh(masked, 'ls -A /root', { mode, workspaceRoot: workspaceRoot(), cwd: workspaceRoot() })).stdout).toBe('DONE\n')
    expect(snapshot(home)).toEqual(before)
  })

  it('a link in the workspace to ~/.ssh/id_rsa, /etc/shadow or /root reads nothing, nor does /proc/1/root or /proc/self/root', async () => {
    symlinkSync(join(home, '.ssh/id_rsa'), join(workspace.path, 'key'))
    symlinkSync(join(home, '.ssh'), join(workspace.path, 'ssh-dir'))
    symlinkSync('/etc/shadow', join(workspace.path, 'shadow'))
    symlinkSync('/root', join(workspace.path, 'root-home'))
    const paths = [
      join(workspace.path, 'key'),
      join(workspace.path, 'ssh-dir'),
      join(workspace.path, 'shadow'),
      `/proc/1/root${home}/.ssh/id_rsa`,
      `/proc/self/root${home}/.aws/credentials`,
      '/proc/1/root/etc/shadow',
      `/proc/1/cwd/key`,
    ]
    const result = await sh(masked, paths.map(readAttempts).join('; '))
    expect(result.stdout).not.toContain(SECRET)
    expect(result.stdout).not.toContain(shadowLine())
    expect(result.stdout.endsWith('DONE\n')).toBe(true)
    if (isRoot) {
      expect((await sh(masked, `ls -A ${workspace.path}/root-home/; ls -A /proc/1/root/root/`)).stdout).toBe('DONE\n')
    }
  })

  it('readablePaths opens each of them on purpose, read-only', async () => {
    for (const [path, file] of Object.entries(CREDENTIAL_FILES)) {
      const result = await sh(opened, `cat '${join(home, file)}'; echo x >> '${join(home, file)}' 2>/dev/null || echo READ-ONLY`)
      expect(result.stdout, path).toBe(`${SECRET} ${file}\nREAD-ONLY\nDONE\n`)
    }
    for (const path of SYSTEM_PATHS) expect((await sh(opened, `head -n 1 ${path}`)).stdout).toBe(`${readFileSync(path, 'utf8').split('\n')[0]}\nDONE\n`)
    if (isRoot) expect((await sh(opened, 'ls -A /root | wc -l')).stdout).toBe(`${readdirSync('/root').length}\nDONE\n`)
    expect(snapshot(home)).toEqual(before)
  })
})
