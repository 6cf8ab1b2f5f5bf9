import { randomBytes } from 'node:crypto'
import { rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sessionHostCommand } from 'dsh-session-host'
import { isSubprocessError } from 'dsh-subprocess'
import { afterAll, describe, expect, it } from 'vitest'
import { eventually, isAlive, processesWithArgs } from 'dsh-testkit'
import { bashSpec, cleanupAtEnd, collect, mountRemote } from './support/remote'

// A link that stops carrying bytes without ending: the connect command is a --stdio relay that the
// test stops with SIGSTOP, the way a cut network leaves ssh hanging.
const cleanup = cleanupAtEnd('SIGKILL')
const socketPath = cleanup.socket()
afterAll(() => cleanup.stop())

/** Pids of live relays (`--stdio`) of this file's socket path. */
const relayPids = (): number[] => processesWithArgs('--stdio', socketPath)

describe('liveness', () => {
  it('a relay that stops forwarding: pending calls reject TARGET_UNREACHABLE and done resolves', async () => {
    const connect = [...sessionHostCommand(), '--stdio', '--socket', socketPath, '--idle-exit-ms', '0']
    const remote = await mountRemote({ connect, livenessMs: 300 })
    try {
      const shell = await remote.runtime.spawnTerminal(bashSpec())
      cleanup.process((await remote.runtime.sessionHostPid())!)
      const [relay] = relayPids()
      expect(relay).toBeDefined()
      cleanup.process(relay!)
      shell.onOutput(() => {})
      process.kill(relay!, 'SIGSTOP')
      // A signal is a call the stopped relay never answers; once the link is given up a write fails too.
      const pending = shell.signalForeground('SIGWINCH').catch((error: unknown) => error)
      const failed = await pending
      expect(isSubprocessError(failed, 'TARGET_UNREACHABLE')).toBe(true)
      expect(await shell.done).toEqual({ exitCode: null, signal: 'SIGKILL' })
      expect(isSubprocessError(await shell.write('echo never\r').catch((error: unknown) => error), 'TARGET_UNREACHABLE')).toBe(true)
    } finally {
      await remote.dispose()
    }
  }, 60_000)

  it('a durable terminal outlives the given-up link: once the relay runs again the same handle is adopted on a new connection, its output once and in order', async () => {
    const connect = [...sessionHostCommand(), '--stdio', '--socket', socketPath, '--idle-exit-ms', '0']
    // The first test's relay is still there, stopped: this test's is the new one.
    const earlier = new Set(relayPids())
    const remote = await mountRemote({ connect, livenessMs: 300 })
    try {
      const shell = await remote.runtime.spawnTerminal(bashSpec({ durable: { key: 'liveness-1', ttlMs: 60_000, retainBytes: 65_536 } }))
      cleanup.process((await remote.runtime.sessionHostPid())!)
      const [relay] = relayPids().filter((pid) => !earlier.has(pid))
      expect(relay).toBeDefined()
      cleanup.process(relay!)
      const text = collect(shell)
      // Told once, at the loss, with an error that says the terminal is kept and adopted again.
      const told: Error[] = []
      expect(shell.onLinkLost).toBeTypeOf('function')
      shell.onLinkLost?.((error) => told.push(error))
      await shell.write('echo before-$((1+1))\r')
      await eventually(() => text().includes('before-2'), 'the first echo')
      // Sent as an input frame just before the link stops (it may never reach the session host: the
      // adoption's inputOffset says so, and it is sent again), printed while the link is stopped.
      await shell.write('sleep 0.3; echo while-$((2+3))-stopped\r')
      process.kill(relay!, 'SIGSTOP')
      // A call the stopped link never answers.
      const pending = await shell.signalForeground('SIGWINCH').catch((error: unknown) => error)
      expect(isSubprocessError(pending, 'TARGET_UNREACHABLE')).toBe(true)
      expect(shell.exit).toBeUndefined()
      expect(told).toHaveLength(1)
      expect(isSubprocessError(told[0], 'TARGET_UNREACHABLE')).toBe(true)
      expect(told[0]?.message).toContain('kept on the target and will be adopted again on the next call')
      // The link comes back: the old relay runs its pending SIGTERM (the client's hang-up) and ends.
      process.kill(relay!, 'SIGCONT')
      await shell.write('echo after-$((3+4))\r')
      await eventually(() => text().includes('after-7'), 'the echo on the new connection')
      expect(relayPids()).not.toContain(relay)
      const seen = text()
      expect([seen.match(/before-2/g)?.length, seen.match(/while-5-stopped/g)?.length, seen.match(/after-7\r?\n/g)?.length]).toEqual([1, 1, 1])
      expect(seen.indexOf('while-5-stopped')).toBeLessThan(seen.indexOf('after-7\r'))
      expect(shell.exit).toBeUndefined()
      await shell.terminate()
      expect(await shell.done).toMatchObject({ signal: expect.any(String) })
    } finally {
      await remote.dispose()
    }
  }, 60_000)

  it('a durable terminal whose target stays down: a call fails with TARGET_UNREACHABLE saying it is kept; once the target is back it is adopted', async () => {
    // The connect command reaches the session host only while the gate file exists: without it the target "does not answer".
    const gate = join(tmpdir(), `dsh-liveness-gate-${randomBytes(6).toString('hex')}`)
    writeFileSync(gate, '')
    const connect = ['sh', '-c', 'test -e "$0" && exec "$@"', gate, ...sessionHostCommand(), '--stdio', '--socket', socketPath, '--idle-exit-ms', '0']
    const earlier = new Set(relayPids())
    const remote = await mountRemote({ connect, livenessMs: 300 })
    try {
      const shell = await remote.runtime.spawnTerminal(bashSpec({ durable: { key: 'liveness-down', ttlMs: 60_000, retainBytes: 65_536 } }))
      cleanup.process((await remote.runtime.sessionHostPid())!)
      const [relay] = relayPids().filter((pid) => !earlier.has(pid))
      expect(relay).toBeDefined()
      cleanup.process(relay!)
      const text = collect(shell)
      await shell.write('echo up-$((1+2))\r')
      await eventually(() => text().includes('up-3'), 'the first echo')
      const lost = new Promise<Error>((resolve) => shell.onLinkLost?.(resolve))
      rmSync(gate)
      process.kill(relay!, 'SIGSTOP')
      expect(isSubprocessError(await lost, 'TARGET_UNREACHABLE')).toBe(true)
      // The call's own try to reach the target fails: the terminal is kept, and the error says so.
      const refused = await shell.write('echo while-down\r').catch((error: unknown) => error)
      expect(refused).toMatchObject({ code: 'TARGET_UNREACHABLE', message: expect.stringContaining('The session is kept on the target') })
      expect(shell.exit).toBeUndefined()
      process.kill(relay!, 'SIGCONT')
      writeFileSync(gate, '')
      await shell.write('echo back-$((2*4))\r')
      await eventually(() => text().includes('back-8'), 'the echo once the target is back')
      expect(text()).not.toContain('while-down')
      await shell.terminate()
    } finally {
      rmSync(gate, { force: true })
      await remote.dispose()
    }
  }, 60_000)

  it('a durable terminal through a connect command: the provider going away settles its done (the far side keeps it)', async () => {
    const connect = [...sessionHostCommand(), '--stdio', '--socket', socketPath, '--idle-exit-ms', '0']
    const remote = await mountRemote({ connect, livenessMs: 300 })
    const shell = await remote.runtime.spawnTerminal(bashSpec({ durable: { key: 'unload-1', ttlMs: 60_000, retainBytes: 4096 } }))
    cleanup.process((await remote.runtime.sessionHostPid())!)
    cleanup.process(shell.pid)
    await remote.dispose()
    // Before the fix the handle stayed suspended, waiting for a re-adoption the stopped provider never made.
    expect(await shell.done).toMatchObject({ exitCode: null })
    expect(isAlive(shell.pid)).toBe(true)
  }, 30_000)
})
