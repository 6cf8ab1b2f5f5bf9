import { Context } from '@deepseek-ai/cordis'
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SandboxPolicy } from 'dsh-sandbox'
import { Config, LocalSandbox } from 'dsh-sandbox-local'
import { workspaceHomeName } from 'dsh-sandbox-local/internal'
import { bwrapUnavailable, run, scratchDir } from './helpers'
import { DOTFILES, plantHome, snapshot } from './home-fixture'

/**
 * The private home with real bubblewrap and real programs, run as this suite's user (root here):
 * $HOME is writable inside (vim's viminfo, git config --global, ~/.local, ~/.npm), the user's
 * dotfiles show read-only, and nothing written reaches the real home, which is a planted one.
 */

type Scratch = Awaited<ReturnType<typeof scratchDir>>
let base: Scratch
let homes: Scratch
let workspace: Scratch
let home: string
const root = new Context()

/** A provider whose host home is the planted one. */
class PlantedHomeSandbox extends LocalSandbox {
  protected override hostHome(): string {
    return home
  }
}

/** Run `script` in a sandbox whose environment names the planted home, as a session's would. */
async function sh(script: string, policy: Partial<SandboxPolicy> = {}) {
  const full: SandboxPolicy = { mode: 'workspace-write', workspaceRoot: workspace.path, cwd: workspace.path, ...policy }
  return run(await root.sandbox.confine(['env', `HOME=${home}`, 'sh', '-c', script], full))
}

const privateHome = (writable: boolean) => join(homes.path, workspaceHomeName(workspace.path, writable))

describe.skipIf(bwrapUnavailable !== undefined)('the private home, with real bubblewrap', () => {
  let before: Record<string, string>
  beforeAll(async () => {
    base = await scratchDir('home-base', '/var/tmp')
    homes = await scratchDir('home-state', '/var/tmp')
    workspace = await scratchDir('home-ws', '/var/tmp')
    home = join(base.path, 'home')
    mkdirSync(home)
    plantHome(home)
    before = snapshot(home)
    await root.plugin(PlantedHomeSandbox, Config.parse({ homesDirectory: homes.path }))
  })

  afterAll(async () => {
    await base?.remove()
    await homes?.remove()
    await workspace?.remove()
  })

  it('pip install --user and npm install (offline, from local packages) write to the private home; the real home is unchanged', async () => {
    const result = await sh(
      [
        'set -e',
        'mkdir -p pkgpy/dsh_probe pkgjs app',
        "echo 'VALUE = 7' > pkgpy/dsh_probe/__init__.py",
        `printf '[project]\\nname = "dsh-probe"\\nversion = "1.0"\\n[build-system]\\nrequires = ["setuptools"]\\nbuild-backend = "setuptools.build_meta"\\n' > pkgpy/pyproject.toml`,
        // Debian's python marks itself externally managed (PEP 668): its rule, not the sandbox's.
        'PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --user --no-index --no-build-isolation --quiet ./pkgpy 2>&1 | grep -v WARNING || true',
        `cd /tmp && python3 -c 'import dsh_probe, site; print("PIP", dsh_probe.VALUE, dsh_probe.__file__.startswith(site.getusersitepackages()))' && cd - >/dev/null`,
        `echo '{"name":"dsh-probe-js","version":"1.0.0","main":"index.js"}' > pkgjs/package.json`,
        "echo 'module.exports = 7' > pkgjs/index.js",
        '(cd pkgjs && npm pack --silent >/dev/null)',
        `cd app && echo '{"name":"app","version":"1.0.0"}' > package.json`,
        'npm install --offline --no-audit --no-fund --silent ../pkgjs/dsh-probe-js-1.0.0.tgz',
        `node -e 'console.log("NPM", require("dsh-probe-js"))'`,
        'ls ~/.npm/_cacache >/dev/null && echo NPM-CACHE',
      ].join('\n'),
    )
    expect(result.stdout).toBe('PIP 7 True\nNPM 7\nNPM-CACHE\n')
    expect(snapshot(home)).toEqual(before)
    const kept = privateHome(true)
    expect(readdirSync(join(kept, '.local', 'lib')).some((entry) => entry.startsWith('python'))).toBe(true)
    expect(existsSync(join(kept, '.npm', '_cacache'))).toBe(true)
  })

  it('vim writes its viminfo (no E138), git config --global, ~/.local and ~/.npm work; the real home is unchanged', async () => {
    const result = await sh(
      [
        `vim -N -c wq "$HOME/edit.txt" </dev/null >/tmp/vim.out 2>&1; echo vim=$?`,
        'grep -c E138 /tmp/vim.out',
        'test -s "$HOME/.viminfo" && echo VIMINFO',
        'git config --global user.name sandboxed && git config user.name && git config user.email',
        `python3 -c "import os, readline, site; p = site.getusersitepackages(); os.makedirs(p, exist_ok=True); open(os.path.join(p, 'mod.py'), 'w').write('X = 1'); readline.add_history('1 + 1'); readline.write_history_file(os.path.expanduser('~/.python_history')); print('USER-SITE', p.startswith(os.path.expanduser('~/.local/')))"`,
        'mkdir -p ~/.npm/_cacache && touch ~/.npm/_cacache/index && echo NPM',
        'cat ~/.bashrc ~/.inputrc',
        'echo more >> ~/.bashrc || echo BASHRC-READ-ONLY',
      ].join('; '),
    )
    expect(result.stdout).toBe(
      [
        'vim=0',
        '0',
        'VIMINFO',
        'sandboxed',
        'real@example.org',
        'USER-SITE True',
        'NPM',
        DOTFILES['.bashrc']!.trimEnd(),
        DOTFILES['.inputrc']!.trimEnd(),
        'BASHRC-READ-ONLY',
        '',
      ].join('\n'),
    )
    expect(snapshot(home)).toEqual(before)
    // What was written is in the workspace's private home, on the host, where the user can find it.
    const kept = privateHome(true)
    expect(readFileSync(join(kept, '.gitconfig'), 'utf8')).toContain('name = sandboxed')
    for (const path of ['.viminfo', 'edit.txt', '.python_history', '.npm/_cacache/index']) expect(existsSync(join(kept, path)), path).toBe(true)
    expect(readdirSync(join(kept, '.local/lib')).length).toBe(1)
  })

  it('keeps the home per workspace: the next session finds what the last one wrote; a read-only session has a home of its own', async () => {
    await sh('git config --global core.editor ed')
    expect((await sh('git config --global core.editor')).stdout).toBe('ed\n')
    const readOnly = await sh('git config --global core.editor; echo rc=$?; touch ~/written && echo WRITTEN', { mode: 'read-only' })
    expect(readOnly.stdout).toBe('rc=1\nWRITTEN\n')
    expect(existsSync(join(privateHome(false), 'written'))).toBe(true)
    expect(existsSync(join(privateHome(true), 'written'))).toBe(false)
    expect(snapshot(home)).toEqual(before)
  })

  it('shows the workspace at its own path inside the private home when the workspace lies in the home', async () => {
    const inner = join(home, 'project')
    mkdirSync(inner)
    const innerBefore = snapshot(home)
    const result = await sh('touch "$HOME/project/made" && ls -A "$HOME/project" && test ! -e "$HOME/.ssh" && echo NO-SSH', {
      workspaceRoot: inner,
      cwd: inner,
    })
    expect(result.stdout).toBe('made\nNO-SSH\n')
    expect(existsSync(join(inner, 'made'))).toBe(true)
    expect(Object.keys(snapshot(home)).filter((path) => !(path in innerBefore))).toEqual([join(inner, 'made')])
  })
})
