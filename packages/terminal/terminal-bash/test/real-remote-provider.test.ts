import { randomBytes } from 'node:crypto'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { hostRuntimeDir } from 'dsh-sandbox'
import * as remotePlugin from 'dsh-subprocess-remote'
import { commandLine, descendants, eventually, foregroundGroup, identify, isAlive, type ProcessIdentity, stillRunning } from 'dsh-testkit'
import type { TerminalSessionId } from 'dsh-terminal'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from './support/stack'

// The real stack with dsh-subprocess-remote mounted instead of dsh-subprocess-local: every terminal
// runs in a session host the provider starts on first use, readiness proofs run beside the processes.
const socketPath = join(hostRuntimeDir(process.getuid?.() ?? -1), `test-bash-${randomBytes(6).toString('hex')}`, 'session-host.sock')
let stack: Stack
let id: TerminalSessionId
let pid: number
let sessionHostPid: number | undefined

beforeAll(async () => {
  stack = await startStack(undefined, { provider: { plugin: remotePlugin, config: { socketPath, idleExitMs: 1000 } } })
  const opened = await stack.open()
  id = opened.sessionId
  pid = opened.pid as number
  sessionHostPid = await (stack.root.subprocess as remotePlugin.RemoteSubprocessRuntime).sessionHostPid()
})
afterAll(async () => {
  await stack?.dispose()
  if (sessionHostPid) await eventually(() => !isAlive(sessionHostPid!), 'the idle session host to exit')
  rmSync(join(socketPath, '..'), { recursive: true, force: true })
})

describe('the shell backend over dsh-subprocess-remote', () => {
  it('the shell runs in the session host, not in this process', () => {
    expect(sessionHostPid).toBeDefined()
    expect(sessionHostPid).not.toBe(process.pid)
    expect(descendants(sessionHostPid!).some((child) => child.pid === pid)).toBe(true)
  })

  it('`true` settles stdin_read with exit 0', async () => {
    expect(await stack.run(id, 'true')).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 })
  })

  it('a python REPL settles stdin_read at its prompt, named', async () => {
    expect(await stack.run(id, 'python3 -q')).toMatchObject({ waitReason: 'stdin_read', input: { kind: 'program' } })
    expect(await stack.run(id, '6*7')).toMatchObject({ viewport: '6*7\n42\n>>> ', waitReason: 'stdin_read' })
    expect(await stack.run(id, 'exit()')).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 })
  })

  it('`read -s` is a password prompt', async () => {
    expect(await stack.run(id, 'read -s -p "token: " token')).toMatchObject({ waitReason: 'stdin_read', input: { kind: 'password' } })
    expect(await stack.run(id, 'hunter2')).toMatchObject({ waitReason: 'stdin_read' })
    expect(await stack.run(id, 'echo "${#token}"')).toMatchObject({ viewport: expect.stringContaining('7\n') })
  })

  it('SIGINT interrupts `sleep` and the send settles at the prompt with 130', async () => {
    const send = stack.send(id, 'sleep 60')
    await eventually(() => commandLine(foregroundGroup(pid) ?? 0)?.[0]?.endsWith('sleep') === true, 'sleep to take the foreground')
    const signalled = await stack.terminals.signal(stack.agent, id, 'SIGINT')
    expect(signalled.delivered).toBe(true)
    expect(await send.done).toMatchObject({ waitReason: 'stdin_read', exitCode: 130 })
  })

  it('close leaves no process behind', async () => {
    await stack.run(id, 'bash -c \'trap "" TERM; exec sleep 1000\' & echo started')
    const tree: ProcessIdentity[] = [identify(pid)!, ...descendants(pid)]
    expect(tree.length).toBeGreaterThanOrEqual(2)
    expect(await stack.terminals.close(stack.agent, id)).toBe(true)
    expect(tree.filter((identity) => stillRunning(identity))).toEqual([])
  })
})

describe('the session host SIGKILLed under a send', () => {
  it('the send rejects SESSION_HOST_LOST, so does close, nothing of the session survives, and a new session starts a fresh session host', async () => {
    const path = join(hostRuntimeDir(process.getuid?.() ?? -1), `test-bash-kill-${randomBytes(6).toString('hex')}`, 'session-host.sock')
    const doomed = await startStack(undefined, { provider: { plugin: remotePlugin, config: { socketPath: path, idleExitMs: 1000 } } })
    try {
      const opened = await doomed.open()
      const shell = opened.pid as number
      const runtime = doomed.root.subprocess as remotePlugin.RemoteSubprocessRuntime
      const first = (await runtime.sessionHostPid())!
      const send = doomed.send(opened.sessionId, 'sleep 100')
      await eventually(() => commandLine(foregroundGroup(shell) ?? 0)?.[0]?.endsWith('sleep') === true, 'sleep to take the foreground')
      const tree: ProcessIdentity[] = [identify(shell)!, ...descendants(shell)]
      process.kill(first, 'SIGKILL')
      expect(await send.done.catch((error: { code?: string }) => error.code)).toBe('SESSION_HOST_LOST')
      expect(await doomed.terminals.close(doomed.agent, opened.sessionId).catch((error: { code?: string }) => error.code)).toBe('SESSION_HOST_LOST')
      await eventually(() => tree.every((identity) => !stillRunning(identity)), 'every process of the session to be gone')
      const next = await doomed.open()
      const second = (await runtime.sessionHostPid())!
      expect(second).not.toBe(first)
      expect(await doomed.run(next.sessionId, 'echo again-$((5*5))')).toMatchObject({ viewport: expect.stringContaining('again-25'), waitReason: 'stdin_read' })
      await doomed.dispose()
      await eventually(() => !isAlive(second), 'the fresh session host to exit when idle')
    } finally {
      await doomed.dispose().catch(() => undefined)
      rmSync(join(path, '..'), { recursive: true, force: true })
    }
  })
})
