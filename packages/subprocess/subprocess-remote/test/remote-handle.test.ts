import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import { isSubprocessError } from 'dsh-subprocess'
import * as localPlugin from 'dsh-subprocess-local'
import { eventually, isAlive, statFields } from 'dsh-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bashSpec, collect, type MountedRemote, mountRemote, removeSocketDir } from './support/remote'

// dsh-subprocess-remote against a session host it starts itself on first use.
let remote: MountedRemote
let socketPath: string
let hostPid: number

beforeAll(async () => {
  remote = await mountRemote({ idleExitMs: 1000 })
  socketPath = (remote.runtime as unknown as { config: { socketPath: string } }).config.socketPath
})
afterAll(async () => {
  await remote?.dispose()
  if (hostPid && isAlive(hostPid)) process.kill(hostPid, 'SIGTERM')
  await eventually(() => !hostPid || !isAlive(hostPid), 'the session host to exit')
  removeSocketDir(socketPath)
})

describe('dsh-subprocess-remote: the handle contract through a session host', () => {
  it('starts the session host on first use, detached (its own session), with its log beside the socket and no credentials', async () => {
    process.env.SESSION_HOST_TEST_TOKEN = 'must-not-reach-the-session-host'
    let handle: Awaited<ReturnType<typeof remote.runtime.spawnTerminal>>
    try {
      handle = await remote.runtime.spawnTerminal(bashSpec())
    } finally {
      delete process.env.SESSION_HOST_TEST_TOKEN
    }
    hostPid = (await remote.runtime.sessionHostPid())!
    expect(readFileSync(`/proc/${hostPid}/environ`, 'utf8')).not.toContain('SESSION_HOST_TEST_TOKEN')
    expect(hostPid).not.toBe(process.pid)
    // Field 4 of stat (after state) is the session id: a session of its own, not the test's.
    expect(Number(statFields(hostPid)![3])).toBe(hostPid)
    expect(existsSync(join(socketPath, '..', 'session-host.log'))).toBe(true)
    await handle.terminate()
  })

  it('first-listener replay: output that came before anyone listened reaches the first listener, synchronously', async () => {
    const handle = await remote.runtime.spawnTerminal({ ...bashSpec(), argv: ['sh', '-c', 'printf early'] })
    // `done` resolves after every chunk was held for the first listener.
    expect(await handle.done).toEqual({ exitCode: 0, signal: null })
    const first = collect(handle)
    const second = collect(handle)
    expect(first()).toBe('early')
    expect(second()).toBe('')
    await handle.terminate()
  })

  it('writes in call order, done after all output, then TERMINAL_EXITED', async () => {
    const handle = await remote.runtime.spawnTerminal({ ...bashSpec(), argv: ['sh', '-c', 'read a; read b; echo "got:$a:$b"; exit 3'] })
    expect(handle.pid).toBeGreaterThan(0)
    expect(handle.limits).toEqual({})
    const text = collect(handle)
    await Promise.all([handle.write('one\r'), handle.write('two\r')])
    const exit = await handle.done
    expect(exit).toEqual({ exitCode: 3, signal: null })
    expect(handle.exit).toEqual(exit)
    expect(text()).toContain('got:one:two')
    const late = await handle.write('x').catch((error: unknown) => error)
    expect(isSubprocessError(late, 'TERMINAL_EXITED')).toBe(true)
    expect(await handle.inspectForeground()).toBeUndefined()
    await handle.terminate()
    await handle.terminate()
    expect(isAlive(handle.pid)).toBe(false)
  })

  it('the environment equals what the in-process provider gives for the same spec', async () => {
    const spec = { ...bashSpec({ env: { TERM: 'dumb', EXTRA: 'set', HOME: undefined } }), argv: ['sh', '-c', 'env | LC_ALL=C sort'] }
    const local = new Context()
    await local.plugin(localPlugin, {})
    const inProcess = await local.subprocess.spawnTerminal(spec)
    const inProcessText = collect(inProcess)
    await inProcess.done
    await inProcess.terminate()
    const viaHost = await remote.runtime.spawnTerminal(spec)
    const viaHostText = collect(viaHost)
    await viaHost.done
    await viaHost.terminate()
    expect(viaHostText()).toContain('EXTRA=set')
    expect(viaHostText()).not.toMatch(/^HOME=/m)
    expect(viaHostText()).toBe(inProcessText())
  })

  it('a wrapped spawn runs what wrapper.wrap returns (wrapped on this side)', async () => {
    const wrapper = { key: 'test', wrap: async (argv: readonly string[]) => ['env', 'WRAPPED=yes', ...argv] }
    const handle = await remote.runtime.spawnTerminal({ ...bashSpec(), argv: ['sh', '-c', 'echo "wrapped:$WRAPPED"'], wrapper })
    const text = collect(handle)
    await handle.done
    expect(text()).toContain('wrapped:yes')
    await handle.terminate()
  })

  it('an aborted spawn rejects with SPAWN_ABORTED and leaves no process', async () => {
    const controller = new AbortController()
    controller.abort()
    const aborted = await remote.runtime.spawnTerminal({ ...bashSpec(), signal: controller.signal }).catch((error: unknown) => error)
    expect(isSubprocessError(aborted, 'SPAWN_ABORTED')).toBe(true)
    const later = new AbortController()
    const spawning = remote.runtime.spawnTerminal({ ...bashSpec(), signal: later.signal })
    later.abort()
    expect(isSubprocessError(await spawning.catch((error: unknown) => error), 'SPAWN_ABORTED')).toBe(true)
  })

  it('seam errors keep their codes: a missing cwd is INVALID_SPEC, a missing program SPAWN_FAILED', async () => {
    const noCwd = await remote.runtime.spawnTerminal({ ...bashSpec(), cwd: '/no/such/dir' }).catch((error: unknown) => error)
    expect(isSubprocessError(noCwd, 'INVALID_SPEC')).toBe(true)
    const noProgram = await remote.runtime.spawnTerminal({ ...bashSpec(), argv: ['no-such-program-xyz'] }).catch((error: unknown) => error)
    expect(isSubprocessError(noProgram, 'SPAWN_FAILED')).toBe(true)
  })

  it('two providers racing to start the session host get one session host', async () => {
    const path = (remote.runtime as unknown as { config: { socketPath: string } }).config.socketPath.replace('session-host.sock', 'race.sock')
    const first = await mountRemote({ socketPath: path, idleExitMs: 500 })
    const second = await mountRemote({ socketPath: path, idleExitMs: 500 })
    const [a, b] = await Promise.all([first.runtime.spawnTerminal(bashSpec()), second.runtime.spawnTerminal(bashSpec())])
    const [pidA, pidB] = await Promise.all([first.runtime.sessionHostPid(), second.runtime.sessionHostPid()])
    expect(pidA).toBe(pidB)
    await Promise.all([a.terminate(), b.terminate()])
    await first.dispose()
    await second.dispose()
    // Idle with no client: it exits by itself.
    await eventually(() => !isAlive(pidA!), 'the raced session host to exit when idle')
    expect(readFileSync(join(path, '..', 'session-host.log'), 'utf8')).not.toContain('cannot start')
  })
})
