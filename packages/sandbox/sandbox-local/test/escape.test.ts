import { Context } from '@deepseek-ai/cordis'
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SandboxPolicy } from 'dsh-sandbox'
import { Config, type HostFacts, LocalSandbox } from 'dsh-sandbox-local'
import { bwrapUnavailable, interfaces, run, scratchDir } from './helpers'

/**
 * The attacks of the security review, tried for real: bwrap under the user this suite runs as
 * (root on our machines and CI, where the sandbox once kept every capability).
 */

type Scratch = Awaited<ReturnType<typeof scratchDir>>
const hasGit = existsSync('/usr/bin/git')
const hasIp = existsSync('/usr/sbin/ip') || existsSync('/sbin/ip') || existsSync('/usr/bin/ip')

let workspace: Scratch
let outside: Scratch
let installation: string
let socketPath: string
let socketServer: Server
const root = new Context()

/** A provider whose host installation and control sockets are planted in scratch directories. */
class PlantedSandbox extends LocalSandbox {
  protected override async probeHost(): Promise<HostFacts> {
    const facts = await super.probeHost()
    return { ...facts, installationRoots: [...facts.installationRoots, installation] }
  }

  protected override controlSockets(): readonly string[] {
    return [socketPath]
  }
}

async function sh(script: string, policy: Partial<SandboxPolicy> = {}) {
  const full: SandboxPolicy = { mode: 'workspace-write', workspaceRoot: workspace.path, cwd: workspace.path, ...policy }
  return run(await root.sandbox.confine(['sh', '-c', script], full))
}

function git(args: string[], cwd: string): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8' })
}

describe.skipIf(bwrapUnavailable !== undefined)('attacks on the sandbox, with real bubblewrap', () => {
  beforeAll(async () => {
    workspace = await scratchDir('escape-ws', '/var/tmp')
    outside = await scratchDir('escape-outside', '/var/tmp')
    installation = join(workspace.path, 'tools', 'dsh-install')
    await mkdir(installation, { recursive: true })
    await writeFile(join(installation, 'server.js'), 'original\n')
    socketPath = join(outside.path, 'control.sock')
    socketServer = createServer((connection) => connection.end('GRANTED\n'))
    await new Promise<void>((listening) => socketServer.listen(socketPath, listening))
    await root.plugin(PlantedSandbox, Config.parse({ protectedPaths: ['Makefile.trusted'] }))
  })

  afterAll(async () => {
    await new Promise((closed) => socketServer?.close(closed))
    await workspace?.remove()
    await outside?.remove()
  })

  it('no capability inside, in both modes and whatever the network', async () => {
    for (const policy of [{ mode: 'workspace-write' }, { mode: 'read-only' }, { mode: 'workspace-write', network: 'none' }] as const) {
      const result = await sh('grep -E "^Cap(Eff|Prm|Amb):" /proc/self/status', policy)
      expect(result.code, JSON.stringify(policy)).toBe(0)
      expect(result.stdout.trim().split('\n'), JSON.stringify(policy)).toEqual([
        'CapPrm:\t0000000000000000',
        'CapEff:\t0000000000000000',
        'CapAmb:\t0000000000000000',
      ])
    }
  })

  it('the escape line of the review fails and leaves no file outside the workspace', async () => {
    const target = join(outside.path, 'escape_proof')
    const line = `mount -o remount,bind,rw / && umount -l /tmp && echo pwned > '${target}' && echo ESCAPED`
    const result = await sh(line)
    expect(result.stdout).not.toContain('ESCAPED')
    expect(result.code).not.toBe(0)
    expect(existsSync(target)).toBe(false)
  })

  it('remounting / or the workspace is refused in both modes', async () => {
    for (const mode of ['workspace-write', 'read-only'] as const) {
      for (const path of ['/', workspace.path]) {
        const result = await sh(`mount -o remount,bind,rw '${path}' && echo REMOUNTED`, { mode })
        expect(result.stdout, `${mode} ${path}`).not.toContain('REMOUNTED')
        expect(result.code, `${mode} ${path}`).not.toBe(0)
      }
    }
    const write = await sh(`echo x > '${workspace.path}/after-remount'`, { mode: 'read-only' })
    expect(write.stderr).toContain('Read-only file system')
  })

  it('a new user namespace with full capabilities inside is refused (unshare -r)', async () => {
    const result = await sh('unshare -r id -u && echo UNSHARED')
    expect(result.stdout).not.toContain('UNSHARED')
    expect(result.code).not.toBe(0)
  })

  it.skipIf(!hasIp)("the host's network interfaces cannot be changed", async () => {
    // A no-op change (lo's own MTU) still needs CAP_NET_ADMIN: harmless if the sandbox were broken.
    const mtu = readFileSync('/sys/class/net/lo/mtu', 'utf8').trim()
    const shared = await sh(`ip link set lo mtu ${mtu} && echo CHANGED`)
    expect(shared.stdout).not.toContain('CHANGED')
    expect(shared.stderr).toMatch(/Operation not permitted/)
    // In a network namespace of its own, even its own loopback stays as it is.
    const own = await sh('ip link set lo down && echo DOWN', { network: 'none' })
    expect(own.stdout).not.toContain('DOWN')
  })

  it('network "none" cuts egress in workspace-write too', async () => {
    const result = await sh('cat /proc/net/dev', { network: 'none' })
    expect(interfaces(result.stdout)).toEqual(['lo'])
  })

  it('a control socket is hidden: connecting to it fails inside, while it answers outside', async () => {
    const script = `python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(s.recv(64).decode().strip())" '${socketPath}'`
    const inside = await sh(script)
    expect(inside.stdout).not.toContain('GRANTED')
    expect(inside.code).not.toBe(0)
    const host = await run(['sh', '-c', script])
    expect(host.stdout).toContain('GRANTED')
  })

  it('a control socket stays hidden when the workspace holds it (the workspace bind would show it again)', async () => {
    const script = `python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(s.recv(64).decode().strip())" '${socketPath}'`
    for (const mode of ['read-only', 'workspace-write'] as const) {
      const inside = await sh(script, { mode, workspaceRoot: outside.path, cwd: outside.path })
      expect(inside.stdout).not.toContain('GRANTED')
      expect(inside.code).not.toBe(0)
    }
  })

  it("the user's runtime directory is private and empty inside: its sockets (the user bus, agents, dsh-terminal attach) cannot be reached", async () => {
    const runtime = await scratchDir('escape-runtime', '/var/tmp')
    const attachDir = join(runtime.path, 'dsh-terminal')
    await mkdir(attachDir, { mode: 0o700 })
    const attachSocket = join(attachDir, '4242.sock')
    const server = createServer((connection) => connection.end('ATTACHED\n'))
    await new Promise<void>((listening) => server.listen(attachSocket, listening))
    await writeFile(join(attachDir, '4242.token'), 'secret-token\n', { mode: 0o600 })
    const previous = process.env.XDG_RUNTIME_DIR
    process.env.XDG_RUNTIME_DIR = runtime.path
    try {
      const connect = `python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(s.recv(64).decode().strip())" '${attachSocket}'`
      const inside = await sh(`ls -A '${runtime.path}'; cat '${join(attachDir, '4242.token')}'; ${connect}`)
      expect(inside.stdout).not.toMatch(/dsh-terminal|secret-token|ATTACHED/)
      expect(inside.code).not.toBe(0)
      // The directory itself is there and writable, like a private /tmp.
      expect((await sh(`touch '${runtime.path}/inside' && ls -A '${runtime.path}'`)).stdout.trim()).toBe('inside')
      expect((await run(['sh', '-c', connect])).stdout).toContain('ATTACHED')
      expect(existsSync(join(runtime.path, 'inside'))).toBe(false)
    } finally {
      if (previous === undefined) delete process.env.XDG_RUNTIME_DIR
      else process.env.XDG_RUNTIME_DIR = previous
      await new Promise((closed) => server.close(closed))
      await runtime.remove()
    }
  })

  it("the host's installation inside the workspace stays read-only; the rest of the workspace is writable", async () => {
    const result = await sh(`echo hacked > '${installation}/server.js'; echo new > '${installation}/added.js'; echo ok > '${workspace.path}/tools/note'`)
    expect(result.stderr).toContain('Read-only file system')
    expect(await readFile(join(installation, 'server.js'), 'utf8')).toBe('original\n')
    expect(existsSync(join(installation, 'added.js'))).toBe(false)
    expect(await readFile(join(workspace.path, 'tools', 'note'), 'utf8')).toBe('ok\n')
    const moved = await sh(`mv '${installation}' '${workspace.path}/tools/moved' && echo MOVED`)
    expect(moved.stdout).not.toContain('MOVED')
  })

  it('a workspace that is the installation itself is read-only, and the sandbox says why before the command runs', async () => {
    const result = await sh(`echo STARTED; touch '${installation}/new.js'`, { workspaceRoot: installation, cwd: installation })
    expect(result.stderr).toContain(`dsh-sandbox: ${installation} is this server's own installation, kept read-only here`)
    expect(result.stderr).toContain('--cwd DIR')
    // The notice comes first: before anything the command prints, then the command's own failure.
    expect(result.stderr.indexOf('dsh-sandbox:')).toBeLessThan(result.stderr.indexOf('Read-only file system'))
    expect(result.stdout).toBe('STARTED\n')
    expect(existsSync(join(installation, 'new.js'))).toBe(false)
    // A workspace that merely contains it says nothing.
    expect((await sh('true')).stderr).not.toContain('dsh-sandbox:')
  })

  it('a configured protected path stays read-only; a missing one is skipped', async () => {
    await writeFile(join(workspace.path, 'Makefile.trusted'), 'all:\n')
    const result = await sh('echo evil >> Makefile.trusted; rm -f Makefile.trusted')
    expect(result.code).not.toBe(0)
    expect(await readFile(join(workspace.path, 'Makefile.trusted'), 'utf8')).toBe('all:\n')
  })

  describe.skipIf(!hasGit)('git metadata', () => {
    let repo: string
    const identity = ['-c', 'user.name=Agent', '-c', 'user.email=agent@example.invalid']

    beforeAll(async () => {
      repo = join(workspace.path, 'repo')
      await mkdir(repo)
      git(['init', '-q'], repo)
      await writeFile(join(repo, 'a.txt'), 'a\n')
      git([...identity, 'add', 'a.txt'], repo)
      git([...identity, 'commit', '-qm', 'first'], repo)
    })

    /** Run in the repository as its own workspace, so its .git is the one protected. */
    function inRepo(script: string) {
      return sh(script, { workspaceRoot: repo, cwd: repo })
    }

    it('hooks and config are not writable, while git commit works', async () => {
      const hook = await inRepo(
        "printf '#!/bin/sh\\necho HOOKED > /var/tmp/hooked\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit && echo PLANTED",
      )
      expect(hook.stdout).not.toContain('PLANTED')
      expect(existsSync(join(repo, '.git', 'hooks', 'pre-commit'))).toBe(false)
      const config = await inRepo(
        'git config core.hooksPath /var/tmp; git config core.fsmonitor "touch /var/tmp/fsmonitor"; echo "[core] hooksPath = /var/tmp" >> .git/config',
      )
      expect(config.stderr).toMatch(/Read-only file system|could not lock config file/)
      expect(git(['config', '--list', '--local'], repo)).not.toMatch(/hookspath|fsmonitor/i)
      const commit = await inRepo(`echo b > b.txt && git ${identity.join(' ')} add b.txt && git ${identity.join(' ')} commit -qm second && git log --format=%s`)
      expect(commit.stderr).toBe('')
      expect(commit.stdout).toBe('second\nfirst\n')
      expect(git(['log', '--format=%s'], repo)).toBe('second\nfirst\n')
    })

    it('.git cannot be swapped for a forged one, nor its config removed or its hooks replaced', async () => {
      const swap = await inRepo('mv .git .git-old && mkdir -p .git/hooks && echo SWAPPED')
      expect(swap.stdout).not.toContain('SWAPPED')
      const remove = await inRepo('rm -f .git/config; rm -rf .git/hooks; mv .git/hooks .git/hooks-old; echo done')
      expect(remove.stdout).toBe('done\n')
      expect(existsSync(join(repo, '.git', 'config'))).toBe(true)
      expect(existsSync(join(repo, '.git', 'hooks'))).toBe(true)
      expect(existsSync(join(repo, '.git', 'hooks-old'))).toBe(false)
      expect(git(['status', '--porcelain'], repo)).toBe('')
    })

    it('a repository without hooks/ gets one (read-only) before the sandbox starts', async () => {
      const bare = join(workspace.path, 'nohooks')
      await mkdir(bare)
      git(['init', '-q'], bare)
      execFileSync('rm', ['-rf', join(bare, '.git', 'hooks')])
      const result = await sh('mkdir -p .git/hooks; echo x > .git/hooks/post-checkout && echo PLANTED', { workspaceRoot: bare, cwd: bare })
      expect(result.stdout).not.toContain('PLANTED')
      expect(existsSync(join(bare, '.git', 'hooks', 'post-checkout'))).toBe(false)
    })
  })
})
