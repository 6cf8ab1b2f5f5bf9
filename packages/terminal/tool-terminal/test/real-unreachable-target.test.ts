import { randomBytes } from 'node:crypto'
import { rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { defaultSocketPath, sessionHostCommand } from 'dsh-session-host'
import type { RemoteSubprocessRuntime } from 'dsh-subprocess-remote'
import { eventually, isAlive, processesRunning } from 'dsh-testkit'
import { afterAll, describe, expect, it } from 'vitest'
import { mountRealTools, type RealTools, text } from './real-stack'

// terminal_list with targets that cannot be asked: one whose connect command runs and never answers
// (a relay that hangs), one whose command fails at once (ssh to a host that is not there). The list
// still comes, with the sessions of the targets that answered, and names each of the others.

const socket = () => join(dirname(defaultSocketPath()), `test-unreach-${randomBytes(6).toString('hex')}`, 'session-host.sock')
const localSocket = socket()
const farSocket = socket()
const marker = `mute-${randomBytes(4).toString('hex')}`
/** A connect command that runs, reads nothing and never writes a byte: no hello ever comes. */
const mute = [process.execPath, '-e', 'setInterval(() => {}, 1 << 30)', marker]
const LIST_TIMEOUT_MS = 1_000
const remote = {
  socketPath: localSocket,
  idleExitMs: 0,
  listTimeoutMs: LIST_TIMEOUT_MS,
  targets: {
    far: { connect: [...sessionHostCommand(), '--stdio', '--socket', farSocket, '--idle-exit-ms', '0'] },
    mute: { connect: mute },
    gone: { connect: ['sh', '-c', 'echo "ssh: connect to host build-2 port 22: No route to host" >&2; exit 255'] },
  },
}
let stack: RealTools | undefined
const hostPids = new Set<number>()

afterAll(async () => {
  await stack?.dispose()
  for (const pid of hostPids) if (isAlive(pid)) process.kill(pid, 'SIGTERM')
  await eventually(() => [...hostPids].every((pid) => !isAlive(pid)), 'the session hosts to stop')
  await eventually(() => processesRunning(mute).length === 0, 'the mute connect command to end')
  for (const path of [localSocket, farSocket]) rmSync(join(path, '..'), { recursive: true, force: true })
})

describe('terminal_list with targets that do not answer', () => {
  it('names each unreachable target with its reason, in the text and the structured result, and still lists the rest', async () => {
    stack = await mountRealTools({ detachedTtlMs: 600_000 }, { remote })
    const agent = await stack.root.agents.create()
    const far = await stack.call(agent, 'terminal_open', { type: 'shell', target: 'far', cwd: '/tmp' })
    expect(far.isError).toBeFalsy()
    const runtime = stack.root.subprocess as RemoteSubprocessRuntime
    hostPids.add((await runtime.sessionHostPid('far'))!).add((await runtime.sessionHostPid())!)

    const listed = await stack.call(agent, 'terminal_list', {})
    expect(listed.isError).toBeFalsy()
    const body = text(listed)
    expect(body).toMatch(/pty-1 \[shell\] running target=far pid=/)
    expect(body).toContain(`target mute unreachable: no answer within ${LIST_TIMEOUT_MS} ms`)
    expect(body).toMatch(/target gone unreachable: the session host is gone \(the connection ended\)/)
    expect(body).not.toMatch(/target (far|local) unreachable/)
    // The list did not wait for the mute target: its command is still running, still without an answer.
    expect(processesRunning(mute)).toHaveLength(1)
    const structured = (listed.meta?.unreachableTargets ?? []) as { target: string; reason: string }[]
    expect(structured.map((entry) => entry.target).sort()).toEqual(['gone', 'mute'])
    expect(structured.find((entry) => entry.target === 'mute')?.reason).toBe(`no answer within ${LIST_TIMEOUT_MS} ms`)
    expect(((listed.meta?.sessions ?? []) as { sessionId: string }[]).map((session) => session.sessionId)).toEqual(['pty-1'])

    await stack.call(agent, 'terminal_close', { sessionId: 'pty-1' })
  })
})
