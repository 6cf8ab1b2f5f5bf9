import { Context } from '@deepseek-ai/cordis'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { ConfinedMode } from 'dsh-sandbox'
import * as localPlugin from 'dsh-sandbox-local'
import { descendants, eventually, processName, statFields, stillRunning } from 'dsh-testkit'
import { bwrapUnavailable, DEADLINE_MS, interfaces, scratchDir } from './helpers'
import { Terminal } from './terminal'

const root = new Context()
let workspace: Awaited<ReturnType<typeof scratchDir>>
const open: Terminal[] = []

async function confinedBash(mode: ConfinedMode): Promise<Terminal> {
  const argv = await root.sandbox.confine(['bash', '--noprofile', '--norc', '-i'], {
    mode,
    workspaceRoot: workspace.path,
    cwd: workspace.path,
  })
  const terminal = new Terminal(argv, workspace.path)
  open.push(terminal)
  await terminal.ready()
  return terminal
}

/**
 * Close the terminal and prove that every process it had goes away on its own. bwrap's outer
 * process may report the exit a moment before the sandbox's init has finished killing the pid
 * namespace, so the check waits for the kernel instead of assuming they are simultaneous.
 */
async function closeAndCheck(terminal: Terminal): Promise<void> {
  const members = descendants(terminal.pty.pid)
  expect(members.length).toBeGreaterThan(0)
  terminal.type('exit')
  await terminal.exit()
  await eventually(() => (members.some(stillRunning) ? undefined : true), 'every sandbox member to exit', DEADLINE_MS)
}

describe.skipIf(bwrapUnavailable !== undefined)('a confined interactive shell on a real PTY', () => {
  beforeAll(async () => {
    await root.plugin(localPlugin, {})
    workspace = await scratchDir('pty')
  })

  afterEach(() => {
    for (const terminal of open.splice(0)) terminal.pty.kill('SIGKILL')
  })

  afterAll(async () => {
    await workspace?.remove()
  })

  it('keeps its controlling terminal: tty, size, resize', async () => {
    const terminal = await confinedBash('workspace-write')
    const tty = await terminal.run('tty')
    expect(tty.status).toBe(0)
    expect(tty.text).not.toContain('not a tty')
    expect(tty.text).toMatch(/\/dev\/(console|pts\/\d+)/)
    expect((await terminal.run('stty size')).text).toContain('30 100')
    terminal.pty.resize(120, 40)
    expect((await terminal.run('stty size')).text).toContain('40 120')
    await closeAndCheck(terminal)
  })

  it('job control works, and the host sees the foreground group through the spawned pid', async () => {
    const terminal = await confinedBash('workspace-write')
    // Idle: the foreground group is bash's own group, a descendant of bwrap, not bwrap's pid.
    const idle = terminal.foregroundGroup() as number
    expect(idle).not.toBe(terminal.pty.pid)
    expect(processName(idle)).toBe('bash')
    expect(descendants(terminal.pty.pid).map((member) => member.pid)).toContain(idle)

    const background = await terminal.run('sleep 1000 & jobs')
    expect(background.text).toMatch(/\[1\]\+\s+Running\s+sleep 1000 &/)
    // `jobs` reports the job as soon as bash forked it; the child becomes `sleep` when it execs.
    const sleeper = await eventually(
      () => descendants(terminal.pty.pid).find((member) => processName(member.pid) === 'sleep'),
      'the background job to exec sleep',
      DEADLINE_MS,
    )
    expect(terminal.foregroundGroup()).toBe(idle)

    const prompts = terminal.promptCount()
    terminal.type('fg')
    const group = await eventually(
      () => {
        const current = terminal.foregroundGroup()
        return current !== idle ? current : undefined
      },
      'sleep to take the foreground',
      DEADLINE_MS,
    )
    expect(group).toBe(Number(statFields(sleeper.pid)?.[2]))
    process.kill(-group, 'SIGINT')
    expect(await terminal.nextStatus(prompts)).toBe(130)
    expect(terminal.foregroundGroup()).toBe(idle)
    expect((await terminal.run('jobs')).text).not.toContain('sleep')
    await closeAndCheck(terminal)
  })

  it('workspace-write: writes inside the workspace only', async () => {
    const terminal = await confinedBash('workspace-write')
    const denied = await terminal.run('echo no > /etc/dsh-sandbox-pty')
    expect(denied.status).not.toBe(0)
    expect(denied.text).toContain('Read-only file system')
    expect((await terminal.run(`echo yes > '${workspace.path}/pty.txt'`)).status).toBe(0)
    expect(readFileSync(join(workspace.path, 'pty.txt'), 'utf8')).toBe('yes\n')
    await closeAndCheck(terminal)
  })

  it('read-only: no writes and no network beyond loopback', async () => {
    const terminal = await confinedBash('read-only')
    const denied = await terminal.run(`echo no > '${workspace.path}/ro.txt'`)
    expect(denied.text).toContain('Read-only file system')
    expect(existsSync(join(workspace.path, 'ro.txt'))).toBe(false)
    const net = await terminal.run('cat /proc/net/dev')
    expect(interfaces(net.text.slice(net.text.indexOf('Inter-')).replace(/\r/g, ''))).toEqual(['lo'])
    await closeAndCheck(terminal)
  })

  it('teardown leaves nothing running, even a disowned daemon', async () => {
    const terminal = await confinedBash('workspace-write')
    await terminal.run('sleep 1000 & disown; setsid sleep 1001 </dev/null >/dev/null 2>&1 &')
    const sleepers = await eventually(
      () => {
        const found = descendants(terminal.pty.pid).filter((member) => processName(member.pid) === 'sleep')
        return found.length === 2 ? found : undefined
      },
      'both sleepers to start',
      DEADLINE_MS,
    )
    expect(sleepers.every(stillRunning)).toBe(true)
    await closeAndCheck(terminal)
    expect(sleepers.filter(stillRunning)).toEqual([])
  })
})
