import { randomBytes } from 'node:crypto'
import { rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import type { Agent } from 'dsh-agent'
import { defaultSocketPath, sessionHostCommand } from 'dsh-session-host'
import type { RemoteSubprocessRuntime } from 'dsh-subprocess-remote'
import { descendants, eventually, isAlive } from 'dsh-testkit'
import { afterAll, describe, expect, it } from 'vitest'
import { mountRealTools, type RealTools, text } from './real-stack'

// Named targets through the tools: terminal_open {"target": …} runs the shell in that target's
// session host (here a second one on this machine, reached through a `--stdio` connect command, as an
// ssh or `podman exec` target reaches one elsewhere), terminal_list says where each session runs.

const socket = () => join(dirname(defaultSocketPath()), `test-targets-${randomBytes(6).toString('hex')}`, 'session-host.sock')
const localSocket = socket()
const farSocket = socket()
const remote = {
  socketPath: localSocket,
  idleExitMs: 0,
  targets: { far: { connect: [...sessionHostCommand(), '--stdio', '--socket', farSocket, '--idle-exit-ms', '0'] } },
}
const stacks: RealTools[] = []
const hostPids = new Set<number>()

afterAll(async () => {
  for (const stack of stacks) await stack.dispose()
  for (const pid of hostPids) if (isAlive(pid)) process.kill(pid, 'SIGTERM')
  await eventually(() => [...hostPids].every((pid) => !isAlive(pid)), 'the session hosts to stop')
  for (const path of [localSocket, farSocket]) rmSync(join(path, '..'), { recursive: true, force: true })
})

async function mounted(mode?: 'workspace-write'): Promise<{ stack: RealTools; agent: Agent }> {
  const stack = await mountRealTools({}, { remote, ...(mode ? { mode } : {}) })
  stacks.push(stack)
  return { stack, agent: await stack.root.agents.create() }
}

describe('terminal_open on a named target', () => {
  it('runs the shell in the target session host, says so in the result and in terminal_list; the default stays here', async () => {
    const { stack, agent } = await mounted()
    const far = await stack.call(agent, 'terminal_open', { type: 'shell', target: 'far', cwd: '/tmp' })
    expect(far.isError).toBeFalsy()
    expect(text(far)).toMatch(/^started terminal session pty-1 \[type: shell\] \[target: far\]/)
    expect(far.meta?.target).toBe('far')
    const here = await stack.call(agent, 'terminal_open', { type: 'shell' })
    expect(text(here)).not.toContain('[target:')
    const runtime = stack.root.subprocess as RemoteSubprocessRuntime
    const farHost = (await runtime.sessionHostPid('far'))!
    const localHost = (await runtime.sessionHostPid())!
    hostPids.add(farHost).add(localHost)
    expect(descendants(farHost).map((child) => child.pid)).toContain(far.meta?.pid)
    expect(descendants(localHost).map((child) => child.pid)).toContain(here.meta?.pid)
    const echoed = await stack.call(agent, 'terminal_send', { sessionId: 'pty-1', text: 'echo "in $(pwd) as $$"' })
    expect(text(echoed)).toContain(`in /tmp as ${far.meta?.pid}`)
    const listed = text(await stack.call(agent, 'terminal_list', {}))
    expect(listed).toMatch(/pty-1 \[shell\] running target=far pid=/)
    expect(listed).toMatch(/pty-2 \[shell\] running pid=/)
    await stack.call(agent, 'terminal_close', { sessionId: 'pty-1' })
    await stack.call(agent, 'terminal_close', { sessionId: 'pty-2' })
    expect(isAlive(far.meta?.pid as number)).toBe(false)
  })

  it('an unknown target is a clear error naming the targets; a relative cwd there is INVALID_CWD', async () => {
    const { stack, agent } = await mounted()
    const unknown = await stack.call(agent, 'terminal_open', { type: 'shell', target: 'nowhere' })
    expect(unknown.isError).toBe(true)
    expect(unknown.error?.code).toBe('UNKNOWN_TARGET')
    expect(text(unknown)).toContain('"local", "far"')
    const relative = await stack.call(agent, 'terminal_open', { type: 'shell', target: 'far', cwd: 'src' })
    expect(relative.isError).toBe(true)
    expect(relative.error?.code).toBe('INVALID_CWD')
    expect(await stack.root.terminals.list(agent)).toEqual([])
  })

  it('a confined mode refuses a named target instead of running it unconfined', async () => {
    const { stack, agent } = await mounted('workspace-write')
    const refused = await stack.call(agent, 'terminal_open', { type: 'shell', target: 'far', cwd: '/tmp' })
    expect(refused.isError).toBe(true)
    expect(refused.error?.code).toBe('TARGET_NOT_CONFINABLE')
    expect(text(refused)).toMatch(/danger-full-access/)
    expect(await stack.root.terminals.list(agent)).toEqual([])
  })
})
