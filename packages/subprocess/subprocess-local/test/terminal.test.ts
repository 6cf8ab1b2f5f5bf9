import { afterEach, describe, expect, it } from 'vitest'
import { isStdinWaitProven, isSubprocessError } from 'dsh-subprocess'
import { eventually, isAlive } from 'dsh-testkit'
import { BASH, BASH_ENV, capture, mountRuntime } from './helpers'

let env: Awaited<ReturnType<typeof mountRuntime>> | undefined

afterEach(async () => {
  await env?.close()
  env = undefined
})

describe('LocalTerminal on a real PTY', () => {
  it('round-trips a command through bash and keeps shell state', async () => {
    env = await mountRuntime()
    const shell = await env.spawn({ argv: BASH, env: BASH_ENV })
    const out = capture(shell)
    await out.waitFor(/PROMPT\$ $/)
    await shell.write('export GREETING=hel""lo; cd /usr\r')
    await out.waitFor(/PROMPT\$ $/, out.length())
    const from = out.length()
    await shell.write('echo "$GREETING from $PWD"\r')
    await out.waitFor(/hello from \/usr\r\n/, from)
  })

  it('replays output that arrived before the first subscriber, and delivers everything before done', async () => {
    env = await mountRuntime()
    // Repeated: output printed while spawnTerminal is still settling must not be dropped either.
    for (let round = 0; round < 10; round++) {
      const handle = await env.spawn({ argv: ['sh', '-c', 'printf "early "; printf "late\\n"; exit 3'] })
      const exit = await handle.done
      const chunks: string[] = []
      handle.onOutput((chunk) => chunks.push(chunk.toString()))
      expect(chunks.join('')).toBe('early late\r\n')
      expect(exit).toEqual({ exitCode: 3, signal: null })
      expect(handle.exit).toEqual(exit)
    }
  })

  it('reports a signal exit, refuses input afterwards, and ignores resize', async () => {
    env = await mountRuntime()
    const handle = await env.spawn({ argv: ['sleep', '30'] })
    process.kill(handle.pid, 'SIGTERM')
    expect(await handle.done).toEqual({ exitCode: null, signal: 'SIGTERM' })
    await expect(handle.write('x')).rejects.toMatchObject({ code: 'TERMINAL_EXITED' })
    expect(() => handle.resize(10, 10)).not.toThrow()
    expect(() => handle.resize(0, 10)).toThrow(/rows must be/)
    expect(await handle.inspectForeground()).toBeUndefined()
    await expect(handle.signalForeground('SIGINT')).rejects.toMatchObject({ code: 'NO_FOREGROUND_GROUP' })
  })

  it('resizes the window', async () => {
    env = await mountRuntime()
    const shell = await env.spawn({ argv: BASH, env: BASH_ENV })
    const out = capture(shell)
    await out.waitFor(/PROMPT\$ $/)
    shell.resize(33, 77)
    const from = out.length()
    await shell.write('stty size\r')
    await out.waitFor(/33 77\r\n/, from)
  })

  it('scrubs credentials from the inherited environment and applies overrides', async () => {
    process.env.DSH_TEST_SECRET_TOKEN = 'leak'
    process.env.MY_API_KEY = 'leak'
    try {
      env = await mountRuntime()
      const handle = await env.spawn({ argv: ['sh', '-c', 'echo "[${MY_API_KEY-unset}] [${DSH_TEST_SECRET_TOKEN-unset}] [$EXTRA]"'], env: { EXTRA: 'yes' } })
      const out = capture(handle)
      await handle.done
      expect(out.text()).toContain('[unset] [unset] [yes]')
    } finally {
      delete process.env.DSH_TEST_SECRET_TOKEN
      delete process.env.MY_API_KEY
    }
  })

  // Thread states and a complete sample come from /proc: Linux only (macOS's ps reports neither).
  it.skipIf(process.platform !== 'linux')('reports the foreground group while sleep runs, and the shell group afterwards', async () => {
    env = await mountRuntime()
    const shell = await env.spawn({ argv: BASH, env: BASH_ENV })
    const out = capture(shell)
    await out.waitFor(/PROMPT\$ $/)
    const idle = await shell.inspectForeground()
    expect(idle).toMatchObject({ processGroupId: shell.pid, isShellGroup: true })
    await shell.write('sleep 30\r')
    const busy = await eventually(async () => {
      const facts = await shell.inspectForeground()
      return facts && !facts.isShellGroup && facts.threads[0]?.state === 'blocked' ? facts : undefined
    }, 'sleep blocked in the foreground')
    expect(busy.processGroupId).not.toBe(shell.pid)
    expect(isStdinWaitProven(busy)).toBe(false)
    expect(busy.threads).toHaveLength(1)
    expect(busy.complete).toBe(true)
    expect(busy.sequence).toBeGreaterThan(idle!.sequence)
    const pgid = await shell.signalForeground('SIGINT')
    expect(pgid).toBe(busy.processGroupId)
    await eventually(async () => (await shell.inspectForeground())?.isShellGroup, 'the shell back in front')
  })

  it('fails spawn cleanly for bad input', async () => {
    env = await mountRuntime()
    await expect(env.spawn({ argv: ['definitely-not-a-program-xyz'] })).rejects.toMatchObject({ code: 'SPAWN_FAILED' })
    await expect(env.spawn({ argv: ['sh'], cwd: '/definitely/not/here' })).rejects.toMatchObject({ code: 'INVALID_SPEC' })
    await expect(env.spawn({ argv: ['sh'], rows: 0 })).rejects.toMatchObject({ code: 'INVALID_SPEC' })
    const aborted = AbortSignal.abort(new Error('caller gave up'))
    const error = await env.spawn({ argv: ['sh'], signal: aborted }).catch((caught: unknown) => caught)
    expect(isSubprocessError(error, 'SPAWN_ABORTED')).toBe(true)
    expect((error as Error).cause).toBe(aborted.reason)
  })

  it('terminates a silent program right after spawn', async () => {
    env = await mountRuntime()
    const handle = await env.spawn({ argv: ['sleep', '60'] })
    await handle.terminate()
    expect(isAlive(handle.pid)).toBe(false)
    expect(await handle.done).toMatchObject({ exitCode: null })
  })

  it('terminates shells HUPed right at their prompt without spending the grace', async () => {
    env = await mountRuntime()
    // A grace far beyond the test's timeout: a terminate that waited it out fails the test.
    const graceMs = 600_000
    for (let round = 0; round < 20; round++) {
      const shell = await env.spawn({ argv: BASH, env: BASH_ENV, graceMs })
      await capture(shell).waitFor(/PROMPT\$ $/)
      await shell.terminate()
      expect(shell.exit?.signal).toBe('SIGHUP')
    }
  })

  it('terminates an idle shell without spending the grace, idempotently', async () => {
    env = await mountRuntime()
    // A grace far beyond the test's timeout: a terminate that waited it out fails the test.
    const graceMs = 600_000
    const shell = await env.spawn({ argv: BASH, env: BASH_ENV, graceMs })
    const out = capture(shell)
    await out.waitFor(/PROMPT\$ $/)
    const [first, second] = [shell.terminate(), shell.terminate()]
    expect(first).toBe(second)
    await first
    expect(isAlive(shell.pid)).toBe(false)
    expect(shell.exit).toEqual({ exitCode: null, signal: 'SIGHUP' })
    await expect(shell.terminate()).resolves.toBeUndefined()
  })
})
