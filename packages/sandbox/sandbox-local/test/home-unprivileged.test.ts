import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SandboxPolicy } from 'dsh-sandbox'
import { installed } from 'dsh-testkit'
import { bwrapOptions, DEFAULT_HOME_FILES, EMPTY_MOUNT_PLAN, homeFileBinds, type MountPlan, planCredentialMasks } from 'dsh-sandbox-local/internal'
import { bwrapUnavailable, run, scratchDir } from './helpers'
import { CREDENTIAL_FILES, plantHome, SECRET, snapshot } from './home-fixture'

/**
 * The private home's and the masks' mounts as an unprivileged user's bwrap makes them (in a user
 * namespace, run with setpriv as nobody): the same options the provider emits give nobody a
 * writable home, its dotfiles read-only, no credentials, and an unchanged real home.
 */

const OTHER_UID = 65534
const canRun = bwrapUnavailable === undefined && process.getuid?.() === 0 && installed('setpriv')

describe.skipIf(!canRun)('the private home as an unprivileged user (setpriv, real bwrap in a user namespace)', () => {
  let base: Awaited<ReturnType<typeof scratchDir>>
  let home: string
  let privateDir: string
  let workspace: string
  let before: Record<string, string>

  beforeAll(async () => {
    base = await scratchDir('home-nobody', '/var/tmp')
    chmodSync(base.path, 0o755)
    home = join(base.path, 'home')
    privateDir = join(base.path, 'state', 'w-1')
    workspace = join(base.path, 'ws')
    for (const dir of [home, privateDir, workspace]) mkdirSync(dir, { recursive: true, mode: 0o700 })
    chmodSync(join(base.path, 'state'), 0o755)
    plantHome(home)
    const chownAll = (path: string) => {
      chownSync(path, OTHER_UID, OTHER_UID)
      for (const entry of Object.keys(snapshot(path))) chownSync(entry, OTHER_UID, OTHER_UID)
    }
    for (const dir of [home, privateDir, workspace]) chownAll(dir)
    before = snapshot(home)
  })

  afterAll(() => base?.remove())

  it('vim, git config --global and ~/.local work; no credential can be read; the real home is unchanged', async () => {
    const policy: SandboxPolicy = { mode: 'workspace-write', workspaceRoot: workspace, cwd: workspace }
    const files = homeFileBinds(
      home,
      DEFAULT_HOME_FILES.filter((file) => file !== '.gitconfig'),
    )
    const privateHome = { path: home, source: privateDir, files }
    const credentials = planCredentialMasks({ home, privateHome, workspaceRoot: workspace, writable: true, readablePaths: [], isRoot: false })
    const plan: MountPlan = { ...EMPTY_MOUNT_PLAN, userNamespace: true, home: { ...privateHome, files: credentials.homeFiles }, masks: credentials.masks }
    const reads = Object.values(CREDENTIAL_FILES)
      .map((file) => `cat '${join(home, file)}' 2>/dev/null`)
      .join('; ')
    const script = [
      'id -u',
      `vim -N -c wq "$HOME/edit.txt" </dev/null >/tmp/vim.out 2>&1; echo vim=$?`,
      'grep -c E138 /tmp/vim.out',
      'git config --global user.name nobody-here && git config --global user.name',
      'mkdir -p ~/.local/lib && touch ~/.local/lib/mod.py && echo LOCAL',
      'cat ~/.bashrc',
      'echo more >> ~/.bashrc 2>/dev/null || echo BASHRC-READ-ONLY',
      reads,
      'echo DONE',
    ].join('; ')
    const argv = ['setpriv', `--reuid=${OTHER_UID}`, `--regid=${OTHER_UID}`, '--clear-groups', 'env', `HOME=${home}`]
    const result = await run([...argv, 'bwrap', ...bwrapOptions(policy, plan), '--', 'sh', '-c', script])
    expect(result.stdout).toBe(`${OTHER_UID}\nvim=0\n0\nnobody-here\nLOCAL\n# the real bashrc\nBASHRC-READ-ONLY\nDONE\n`)
    expect(result.stdout).not.toContain(SECRET)
    expect(snapshot(home)).toEqual(before)
    expect(existsSync(join(privateDir, '.viminfo'))).toBe(true)
    expect(readFileSync(join(privateDir, '.gitconfig'), 'utf8')).toContain('nobody-here')
  })
})
