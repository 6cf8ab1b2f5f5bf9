import { tmpdir } from 'node:os'
import { SubprocessError } from 'dsh-subprocess'
import { TerminalBackendCleanupError } from 'dsh-terminal'
import { Deferred } from 'dsh-testkit'
import { afterEach, describe, expect, it } from 'vitest'
import * as bashPlugin from '../src/index'
import { marker, shellWaiting } from './support/fake-terminal'
import { nonceOf, startFakeStack, type FakeStack } from './support/fake-runtime'

let stack: FakeStack | undefined
afterEach(async () => {
  await stack?.dispose()
  stack = undefined
})

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('expected a rejection')
}

describe('dsh-terminal-bash plugin', () => {
  it('has the plugin shape and registers the shell backend while loaded', async () => {
    expect(bashPlugin.name).toBe('dsh-terminal-bash')
    expect(bashPlugin.inject).toEqual(['terminals', 'subprocess', 'sandboxPolicy'])
    stack = await startFakeStack()
    expect(stack.terminals.listBackends()).toEqual(['shell'])
    await stack.backendFiber.dispose()
    expect(stack.terminals.listBackends()).toEqual([])
  })

  it('refuses an invalid config at load', async () => {
    stack = await startFakeStack()
    await expect(stack.root.plugin(bashPlugin, { handoffGraceMs: 10 })).rejects.toThrow(/handoffGraceMs/)
  })
})

describe('spawn', () => {
  it('starts the controlled bash with the session identity and returns the prompt as motd', async () => {
    stack = await startFakeStack({ rows: 30, cols: 100, disposeGraceMs: 1234 })
    const opened = await stack.terminals.spawn(stack.agent, { type: 'shell', name: 'main', cwd: tmpdir() })
    expect(opened).toMatchObject({ type: 'shell', name: 'main', motd: 'dsh> ', status: { kind: 'running' } })
    const spec = stack.runtime.specs[0]!
    expect(spec).toMatchObject({ argv: ['bash', '--noprofile', '--norc', '-i'], cwd: tmpdir(), rows: 30, cols: 100, graceMs: 1234 })
    expect(spec.env).toMatchObject({
      TERM: 'xterm-256color',
      PAGER: 'cat',
      GIT_PAGER: 'cat',
      MANPAGER: 'cat',
      GIT_EDITOR: ':',
      GIT_TERMINAL_PROMPT: '0',
      PS1: 'dsh> ',
      DSH_TERMINAL_SESSION_ID: opened.sessionId,
      DSH_TERMINAL_OWNER: stack.agent.id,
    })
    expect(nonceOf(spec)).toBeGreaterThanOrEqual(100_000)
    expect(spec.limits).toEqual({ maxProcesses: 1024, maxMemoryBytes: 8 * 1024 ** 3 })
  })

  it('passes the configured caps to the provider, leaving out the ones set to 0', async () => {
    stack = await startFakeStack({ maxProcesses: 64, maxMemoryBytes: 0 })
    await stack.terminals.spawn(stack.agent, { type: 'shell', cwd: tmpdir() })
    expect(stack.runtime.specs[0]?.limits).toEqual({ maxProcesses: 64 })
    await stack.dispose()
    stack = await startFakeStack({ maxProcesses: 0, maxMemoryBytes: 0 })
    await stack.terminals.spawn(stack.agent, { type: 'shell', cwd: tmpdir() })
    expect(stack.runtime.specs[0]?.limits).toBeUndefined()
  })

  it('honours shellPath and shellArgs', async () => {
    stack = await startFakeStack({ shellPath: '/bin/bash', shellArgs: ['--norc', '-i'] })
    await stack.terminals.spawn(stack.agent, { type: 'shell' })
    expect(stack.runtime.specs[0]?.argv).toEqual(['/bin/bash', '--norc', '-i'])
  })

  it('rejects a cwd that does not exist before spawning anything', async () => {
    stack = await startFakeStack()
    const error = await failure(stack.terminals.spawn(stack.agent, { type: 'shell', cwd: '/definitely/not/here' }))
    expect(error).toMatchObject({ name: 'ShellBackendError', code: 'INVALID_CWD', message: 'PTY working directory "/definitely/not/here" does not exist' })
    expect(stack.runtime.specs).toEqual([])
  })

  it('a caller abort during startup closes the private session and rejects with exactly the reason', async () => {
    stack = await startFakeStack()
    stack.runtime.printPrompt = false
    const caller = new AbortController()
    const pending = stack.terminals.spawn(stack.agent, { type: 'shell' }, caller.signal)
    while (stack.runtime.terminals.length === 0) await new Promise((resolve) => setImmediate(resolve))
    const reason = new Error('stop')
    caller.abort(reason)
    expect(await failure(pending)).toBe(reason)
    expect(stack.runtime.terminals[0]?.terminateCalls).toBe(1)
  })

  it('a failed rollback is reported as TerminalBackendCleanupError', async () => {
    stack = await startFakeStack({ timeoutMs: 50 })
    stack.runtime.printPrompt = false
    const gate = new Deferred()
    stack.runtime.beforeSpawn = async () => gate.resolve()
    const pending = failure(stack.terminals.spawn(stack.agent, { type: 'shell' }))
    await gate.promise
    while (stack.runtime.terminals.length === 0) await new Promise((resolve) => setImmediate(resolve))
    stack.runtime.terminals[0]!.failTerminate = new SubprocessError('CLEANUP_FAILED', 'terminal cleanup failed; surviving pids: 9')
    const error = await pending
    expect(error).toBeInstanceOf(TerminalBackendCleanupError)
    expect((error as TerminalBackendCleanupError).spawnError).toMatchObject({ code: 'STARTUP_TIMEOUT' })
  })
})

describe('send reservation and the cancelling SIGINT', () => {
  it('a successor cannot start until the SIGINT of a cancelled send has landed', async () => {
    stack = await startFakeStack()
    const { sessionId } = await stack.terminals.spawn(stack.agent, { type: 'shell' })
    const fake = stack.runtime.terminals[0]!
    const nonce = nonceOf(stack.runtime.specs[0]!)
    fake.foreground = { pgid: 5000, shell: false, threads: [{ pid: 5000, state: 'blocked', switches: 1 }] }
    const first = stack.terminals.startSend(stack.agent, sessionId, { text: 'sleep 60', submit: true })
    while (fake.writes.length === 0) await new Promise((resolve) => setImmediate(resolve))
    fake.holdSignals = true
    expect(first.cancel()).toBe(true)
    while (fake.heldSignals.length === 0) await new Promise((resolve) => setImmediate(resolve))
    // The job (group 5000) exits on its own; a successor would start a new foreground group.
    expect(() => stack!.terminals.startSend(stack!.agent, sessionId, { text: 'vim notes', submit: true })).toThrow(
      expect.objectContaining({ code: 'SEND_ACTIVE' }),
    )
    fake.holdSignals = false
    fake.heldSignals[0]!.resolve()
    while (fake.signals.length === 0) await new Promise((resolve) => setImmediate(resolve))
    fake.foreground = shellWaiting(30)
    fake.emit(`^C\r\n${marker(130, nonce)}dsh> `)
    expect(await first.done).toMatchObject({ waitReason: 'stdin_read', exitCode: 130 })
    await first.released
    fake.foreground = { pgid: 6000, shell: false, threads: [{ pid: 6000, state: 'blocked', switches: 1 }] }
    const second = stack.terminals.startSend(stack.agent, sessionId, { text: 'vim notes', submit: true })
    while (fake.writes.length < 2) await new Promise((resolve) => setImmediate(resolve))
    second.cancel()
    while (fake.signals.length < 2) await new Promise((resolve) => setImmediate(resolve))
    fake.foreground = shellWaiting(31)
    fake.emit(`^C\r\n${marker(130, nonce)}dsh> `)
    await second.done
    await second.released
    expect(fake.events).toEqual(['write "sleep 60\\r"', 'SIGINT 5000', 'write "vim notes\\r"', 'SIGINT 6000'])
  })
})
