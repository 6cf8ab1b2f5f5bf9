import { randomBytes } from 'node:crypto'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { hostRuntimeDir } from 'dsh-sandbox'
import * as remotePlugin from 'dsh-subprocess-remote'
import { descendants, eventually, identify, isAlive, type ProcessIdentity, stillRunning } from 'dsh-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PATIENT, startStack, type Stack } from './support/stack'

// The real stack over dsh-subprocess-remote, durable: the session host is SIGKILLed under two
// sessions (one attached, one of them in flight). The registry answers SESSION_HOST_LOST.
const socketPath = join(hostRuntimeDir(process.getuid?.() ?? -1), `test-lost-${randomBytes(6).toString('hex')}`, 'session-host.sock')
let stack: Stack
const sessionHosts: number[] = []

beforeAll(async () => {
  stack = await startStack(PATIENT, { provider: { plugin: remotePlugin, config: { socketPath, idleExitMs: 500 } }, terminals: { detachedTtlMs: 600_000 } })
})
afterAll(async () => {
  await stack?.dispose()
  await eventually(() => sessionHosts.every((pid) => !isAlive(pid)), 'every session host of this test exited')
  rmSync(join(socketPath, '..'), { recursive: true, force: true })
})

/** A call's failure (sync throw or rejection) as plain values: its name, code and message. */
async function failureOf(call: () => unknown): Promise<{ name?: string; code?: string; message?: string } | undefined> {
  try {
    await call()
  } catch (error) {
    const { name, code, message } = error as { name?: string; code?: string; message?: string }
    return { name, code, message }
  }
  return undefined
}

async function codeOf(call: () => unknown): Promise<string | undefined> {
  return (await failureOf(call))?.code
}

describe('a session host SIGKILLed under its sessions', () => {
  it('every call for them is SESSION_HOST_LOST, they leave the list, nothing of theirs runs, the next open starts a fresh session host', async () => {
    const { terminals, agent } = stack
    const idle = await stack.open({ name: 'idle' })
    const busy = await stack.open({ name: 'busy' })
    const runtime = stack.root.subprocess as remotePlugin.RemoteSubprocessRuntime
    const first = (await runtime.sessionHostPid()) as number
    sessionHosts.push(first)
    await stack.run(idle.sessionId, 'sleep 1000 & echo started')
    const inFlight = stack.send(busy.sessionId, 'sleep 1000')
    const tree: ProcessIdentity[] = [idle, busy].flatMap((opened) => [identify(opened.pid as number)!, ...descendants(opened.pid as number)])
    await eventually(() => tree.length >= 2 && descendants(busy.pid as number).length > 0, 'both sleeps run')
    const everyTree = [...tree, ...descendants(busy.pid as number)]

    process.kill(first, 'SIGKILL')
    // The send in flight ends at once, as that loss, instead of waiting for its timeout.
    expect(await codeOf(() => inFlight.done)).toBe('SESSION_HOST_LOST')
    await eventually(() => everyTree.every((each) => !stillRunning(each)), 'every process of the lost sessions is gone')
    await eventually(() => terminals.list(agent).length === 0, 'the lost sessions leave the list')

    expect(await codeOf(() => terminals.startSend(agent, idle.sessionId, { text: 'true', submit: true }))).toBe('SESSION_HOST_LOST')
    expect(await codeOf(() => terminals.screen(agent, busy.sessionId))).toBe('SESSION_HOST_LOST')
    expect(await codeOf(() => terminals.close(agent, idle.sessionId))).toBe('SESSION_HOST_LOST')
    expect(await codeOf(() => terminals.resume(agent, idle.sessionId, 'shell'))).toBe('SESSION_HOST_LOST')
    expect(await failureOf(() => terminals.read(agent, busy.sessionId))).toMatchObject({
      name: 'TerminalError',
      code: 'SESSION_HOST_LOST',
      message: expect.stringMatching(/session host .* died; every process of the session is gone.*terminal_open/),
    })
    // An id that never existed is still NO_SESSION.
    expect(await codeOf(() => terminals.read(agent, 'pty-999' as typeof idle.sessionId))).toBe('NO_SESSION')

    const fresh = await stack.open({ name: 'idle' })
    const second = (await runtime.sessionHostPid()) as number
    sessionHosts.push(second)
    expect(second).not.toBe(first)
    expect(fresh.sessionId).not.toBe(idle.sessionId)
    expect(await stack.run(fresh.sessionId, 'echo $((6*7))')).toMatchObject({ viewport: expect.stringContaining('42\n'), exitCode: 0 })
    expect(terminals.list(agent).map((session) => session.sessionId)).toEqual([fresh.sessionId])
    await terminals.close(agent, fresh.sessionId)
  })
})
