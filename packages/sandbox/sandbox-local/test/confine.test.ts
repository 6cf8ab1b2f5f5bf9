import { Context } from '@deepseek-ai/cordis'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SandboxPolicy } from 'dsh-sandbox'
import * as localPlugin from 'dsh-sandbox-local'
import { eventually } from 'dsh-testkit'
import { bwrapUnavailable, DEADLINE_MS, interfaces, run, scratchDir } from './helpers'

const root = new Context()
let workspace: Awaited<ReturnType<typeof scratchDir>>
let outside: Awaited<ReturnType<typeof scratchDir>>

/** Run a shell script confined under `mode` with the scratch workspace. */
async function sh(mode: SandboxPolicy['mode'], script: string, cwd?: string) {
  const policy: SandboxPolicy = { mode, workspaceRoot: workspace.path }
  if (cwd !== undefined) policy.cwd = cwd
  return run(await root.sandbox.confine(['sh', '-c', script], policy))
}

/** Host pids whose command line is exactly `argv`. */
function hostProcesses(argv: string[]): number[] {
  const wanted = `${argv.join('\0')}\0`
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8') === wanted
      } catch {
        return false
      }
    })
    .map(Number)
}

describe.skipIf(bwrapUnavailable !== undefined)('confinement with real bubblewrap', () => {
  beforeAll(async () => {
    await root.plugin(localPlugin, {})
    workspace = await scratchDir('ws')
    // Outside /tmp on purpose: the sandbox's /tmp is private, so only a host path proves the bind.
    outside = await scratchDir('outside', existsSync('/var/tmp') ? '/var/tmp' : homedir())
  })

  afterAll(async () => {
    await workspace?.remove()
    await outside?.remove()
  })

  it('workspace-write: writes inside the workspace reach the host', async () => {
    const result = await sh('workspace-write', `echo inside > '${workspace.path}/inside.txt' && echo ok`)
    expect(result).toMatchObject({ code: 0, stdout: 'ok\n' })
    expect(await readFile(join(workspace.path, 'inside.txt'), 'utf8')).toBe('inside\n')
  })

  it('workspace-write: writes to /etc and another directory fail read-only; $HOME is a private one', async () => {
    for (const target of ['/etc/dsh-sandbox-probe', join(outside.path, 'x')]) {
      const result = await sh('workspace-write', `echo no > '${target}'`)
      expect(result.code, target).not.toBe(0)
      expect(result.stderr, target).toContain('Read-only file system')
      expect(existsSync(target), target).toBe(false)
    }
    const name = `dsh-sandbox-probe-${process.pid}`
    const home = await sh('workspace-write', `echo private > '${join(homedir(), name)}' && cat '${join(homedir(), name)}'`)
    expect(home).toMatchObject({ code: 0, stdout: 'private\n' })
    expect(existsSync(join(homedir(), name))).toBe(false)
  })

  it('read-only: the workspace is readable but not writable', async () => {
    await writeFile(join(workspace.path, 'seen.txt'), 'seen\n')
    const read = await sh('read-only', `cat '${workspace.path}/seen.txt'`)
    expect(read).toMatchObject({ code: 0, stdout: 'seen\n' })
    const write = await sh('read-only', `echo no > '${workspace.path}/denied.txt'`)
    expect(write.code).not.toBe(0)
    expect(write.stderr).toContain('Read-only file system')
    expect(existsSync(join(workspace.path, 'denied.txt'))).toBe(false)
  })

  it('/tmp is private and writable in both modes', async () => {
    const name = `dsh-sandbox-private-${process.pid}-${Date.now()}`
    for (const mode of ['read-only', 'workspace-write'] as const) {
      const result = await sh(mode, `echo t > /tmp/${name} && cat /tmp/${name}`)
      expect(result).toMatchObject({ code: 0, stdout: 't\n' })
    }
    expect(existsSync(join('/tmp', name))).toBe(false)
  })

  it('read-only has only a loopback interface; workspace-write shares the host network', async () => {
    const confined = await sh('read-only', 'cat /proc/net/dev')
    expect(interfaces(confined.stdout)).toEqual(['lo'])
    const shared = await sh('workspace-write', 'cat /proc/net/dev')
    expect(interfaces(shared.stdout)).toEqual(interfaces(readFileSync('/proc/net/dev', 'utf8')))
  })

  it('starts in the requested cwd', async () => {
    const sub = join(workspace.path, 'sub dir')
    await mkdir(sub)
    expect((await sh('workspace-write', 'pwd', sub)).stdout).toBe(`${sub}\n`)
    expect((await sh('read-only', 'pwd', sub)).stdout).toBe(`${sub}\n`)
  })

  it('a daemonised descendant does not outlive the sandbox (own pid namespace)', async () => {
    const marker = ['sleep', `${3_000_000 + (process.pid % 100_000)}`]
    const result = await sh('workspace-write', `setsid ${marker.join(' ')} </dev/null >/dev/null 2>&1 & echo started`)
    expect(result).toMatchObject({ code: 0, stdout: 'started\n' })
    // bwrap's outer process may exit a moment before the namespace's init has killed the rest.
    await eventually(() => (hostProcesses(marker).length === 0 ? true : undefined), 'the daemon to be killed with the namespace', DEADLINE_MS)
  })

  it.skipIf(!existsSync('/usr/bin/python3'))('runs python3 inside the sandbox', async () => {
    const result = await run(await root.sandbox.confine(['python3', '-c', 'print(6 * 7)'], { mode: 'read-only', workspaceRoot: workspace.path }))
    expect(result).toMatchObject({ code: 0, stdout: '42\n' })
  })
})
