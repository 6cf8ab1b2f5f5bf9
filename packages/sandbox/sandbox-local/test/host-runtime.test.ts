import { Context } from '@deepseek-ai/cordis'
import { existsSync, lstatSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureRuntimeParent, HOST_RUNTIME_PARENT, hostRuntimeDir, type SandboxPolicy } from 'dsh-sandbox'
import { Config, LocalSandbox } from 'dsh-sandbox-local'
import { bwrapOptions, EMPTY_MOUNT_PLAN } from 'dsh-sandbox-local/internal'
import { hostRuntimeCover } from '../src/host-runtime-cover'
import { bwrapUnavailable, run, scratchDir } from './helpers'

/**
 * Every dsh-terminal host's attach socket and token live under one fixed parent (/tmp/dsh-terminal):
 * a workspace that contains it (/tmp, /) must not show it again, whatever host made the files.
 */

type Scratch = Awaited<ReturnType<typeof scratchDir>>
const uid = process.getuid?.() ?? -1

/** The error `run` throws, as plain values. */
function refusal(run: () => unknown): { code?: string; message: string } | undefined {
  try {
    run()
    return undefined
  } catch (error) {
    return { code: (error as { code?: string }).code, message: (error as Error).message }
  }
}

describe('hostRuntimeCover: when the host runtime parent must be covered after the workspace', () => {
  let scratch: Scratch
  beforeAll(async () => {
    scratch = await scratchDir('cover', '/var/tmp')
  })
  afterAll(() => scratch.remove())

  it('the fixed parent is left to the private /tmp unless the workspace contains it; then it is created and covered', async () => {
    expect(hostRuntimeCover('/var/tmp/project', [])).toBeUndefined()
    expect(hostRuntimeCover('/tmp/project', [])).toBeUndefined()
    expect(hostRuntimeCover('/tmp', [])).toBe(HOST_RUNTIME_PARENT)
    expect(hostRuntimeCover('/', [])).toBe(HOST_RUNTIME_PARENT)
    expect(lstatSync(HOST_RUNTIME_PARENT).isDirectory()).toBe(true)
  })

  it('a parent outside /tmp is covered whenever it exists in the sandbox, and a missing one is created as a mount point', () => {
    const parent = join(scratch.path, 'elsewhere', 'dsh-terminal')
    mkdirSync(join(scratch.path, 'elsewhere'))
    expect(hostRuntimeCover(join(scratch.path, 'project'), [], parent)).toBe(parent)
    expect(lstatSync(parent).mode & 0o7777).toBe(0o1777)
    expect(hostRuntimeCover(scratch.path, [], parent)).toBe(parent)
  })

  it('refuses a workspace or a readable file inside the parent (INVALID_POLICY)', () => {
    const parent = ensureRuntimeParent(join(scratch.path, 'refuse'), uid)
    const inside = hostRuntimeDir(uid, parent)
    mkdirSync(inside, { mode: 0o700 })
    writeFileSync(join(inside, '1.token'), 'secret\n', { mode: 0o600 })
    expect(refusal(() => hostRuntimeCover(inside, [], parent))).toMatchObject({ code: 'INVALID_POLICY', message: expect.stringContaining('attach sockets') })
    expect(refusal(() => hostRuntimeCover(parent, [], parent))).toMatchObject({ code: 'INVALID_POLICY' })
    expect(refusal(() => hostRuntimeCover('/var/tmp/project', [join(inside, '1.token')], parent))).toMatchObject({
      code: 'INVALID_POLICY',
      message: expect.stringContaining('readable file'),
    })
  })

  it('fails closed (SANDBOX_UNAVAILABLE) when a workspace would show a parent that is a planted symlink', () => {
    const target = join(scratch.path, 'target')
    mkdirSync(target)
    const parent = join(scratch.path, 'planted')
    symlinkSync(target, parent)
    expect(refusal(() => hostRuntimeCover(scratch.path, [], parent))).toMatchObject({
      code: 'SANDBOX_UNAVAILABLE',
      message: expect.stringContaining('symlink'),
    })
  })
})

describe('bwrapOptions with a host runtime parent', () => {
  it('covers it last: after the workspace bind and every protected path inside it', () => {
    const plan = { ...EMPTY_MOUNT_PLAN, readOnly: ['/tmp/dsh-terminal/0'], privateDirs: ['/tmp/user'], hostRuntimeParent: '/tmp/dsh-terminal' }
    const options = bwrapOptions({ mode: 'workspace-write', workspaceRoot: '/tmp', cwd: '/tmp' }, plan)
    const cover = options.lastIndexOf('/tmp/dsh-terminal')
    expect(options.slice(cover - 1, cover + 1)).toEqual(['--tmpfs', '/tmp/dsh-terminal'])
    expect(cover).toBeGreaterThan(options.lastIndexOf('/tmp/dsh-terminal/0'))
    expect(cover).toBeGreaterThan(options.lastIndexOf('/tmp/user'))
    expect(options.slice(cover + 1)).toEqual(['--chdir', '/tmp'])
    expect(bwrapOptions({ mode: 'workspace-write', workspaceRoot: '/tmp' })).not.toContain('/tmp/dsh-terminal')
  })
})

describe.skipIf(bwrapUnavailable !== undefined)('a host runtime parent inside the workspace, with real bubblewrap', () => {
  let workspace: Scratch
  let parent: string
  let socketPath: string
  let server: Server
  const root = new Context()

  /** A provider whose host runtime parent is planted in the scratch workspace. */
  class PlantedSandbox extends LocalSandbox {
    protected override hostRuntimeParent(): string {
      return parent
    }
  }

  beforeAll(async () => {
    workspace = await scratchDir('host-runtime', '/var/tmp')
    parent = ensureRuntimeParent(join(workspace.path, 'dsh-terminal'), uid)
    const dir = hostRuntimeDir(uid, parent)
    mkdirSync(dir, { mode: 0o700 })
    socketPath = join(dir, '4242.sock')
    server = createServer((connection) => connection.end('ATTACHED\n'))
    await new Promise<void>((listening) => server.listen(socketPath, listening))
    writeFileSync(join(dir, '4242.token'), 'secret-token\n', { mode: 0o600 })
    await root.plugin(PlantedSandbox, Config.parse({}))
  })

  afterAll(async () => {
    await new Promise((closed) => server.close(closed))
    await workspace.remove()
  })

  const attack = () =>
    `ls -A '${parent}'; cat '${join(hostRuntimeDir(uid, parent), '4242.token')}'; ` +
    `python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(s.recv(64).decode().strip())" '${socketPath}'`

  it.each(['workspace-write', 'read-only'] as const)('%s: the planted host directory is empty inside; outside the socket answers', async (mode) => {
    const policy: SandboxPolicy = { mode, workspaceRoot: workspace.path, cwd: workspace.path }
    const inside = await run(await root.sandbox.confine(['sh', '-c', `${attack()}; echo DONE`], policy))
    expect(inside.stdout).toContain('DONE')
    expect(inside.stdout).not.toMatch(/secret-token|ATTACHED|\b0\b/)
    expect(inside.stderr).toMatch(/No such file or directory/)
    expect((await run(['sh', '-c', attack()])).stdout).toContain('ATTACHED')
  })

  it("refuses a workspace in /proc, /dev or /sys: the host's copies would show every host process, and through /proc/<pid>/root its files, or a writable /sys", async () => {
    for (const workspaceRoot of ['/proc', '/proc/self', '/dev', '/sys', '/sys/kernel']) {
      await expect(root.sandbox.confine(['true'], { mode: 'read-only', workspaceRoot })).rejects.toMatchObject({
        code: 'INVALID_POLICY',
        message: expect.stringContaining('which the sandbox replaces with its own'),
      })
    }
  })

  it('what the sandbox writes there stays in its own tmpfs', async () => {
    const policy: SandboxPolicy = { mode: 'workspace-write', workspaceRoot: workspace.path, cwd: workspace.path }
    await run(await root.sandbox.confine(['sh', '-c', `touch '${parent}/planted'`], policy))
    expect(existsSync(join(parent, 'planted'))).toBe(false)
    // Beside the host directory only the provider's own FIFO pool (see fifo-pool), made by the host.
    expect(readdirSync(parent).filter((name) => !name.startsWith(`sandbox-fifos-${process.pid}-`))).toEqual([String(uid)])
  })
})

describe.skipIf(bwrapUnavailable !== undefined)('the real /tmp/dsh-terminal and workspaces that hold it, with real bubblewrap', () => {
  const marker = join(HOST_RUNTIME_PARENT, `.dsh-sandbox-test-${process.pid}`)
  const root = new Context()

  beforeAll(async () => {
    ensureRuntimeParent()
    writeFileSync(marker, 'visible outside\n')
    await root.plugin(LocalSandbox, Config.parse({}))
  })
  afterAll(() => rm(marker, { force: true }))

  it("refuses a workspace of /tmp itself, in both modes: every socket in it would come back, not only the hosts'", async () => {
    for (const mode of ['workspace-write', 'read-only'] as const) {
      await expect(root.sandbox.confine(['true'], { mode, workspaceRoot: '/tmp', cwd: '/tmp' })).rejects.toMatchObject({
        code: 'INVALID_POLICY',
        message: expect.stringContaining("the machine's shared temporary directory"),
      })
    }
    expect(readdirSync(HOST_RUNTIME_PARENT)).toContain(`.dsh-sandbox-test-${process.pid}`)
  })

  it('shows an empty directory inside a read-only workspace of / while the host sees its files', async () => {
    const inside = await run(
      await root.sandbox.confine(['sh', '-c', `ls -A ${HOST_RUNTIME_PARENT}; echo DONE`], { mode: 'read-only', workspaceRoot: '/', cwd: '/' }),
    )
    expect(inside.stdout.trim()).toBe('DONE')
    expect(readdirSync(HOST_RUNTIME_PARENT)).toContain(`.dsh-sandbox-test-${process.pid}`)
  })
})
