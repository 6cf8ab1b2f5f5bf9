import { tmpdir } from 'node:os'
import { Context } from '@deepseek-ai/cordis'
import { describe, expect, it } from 'vitest'
import { SubprocessRuntime } from 'dsh-subprocess'
import * as local from 'dsh-subprocess-local'
import { eventually, isAlive } from 'dsh-testkit'
import { BASH, BASH_ENV, capture } from './helpers'

const spec = { argv: BASH, env: BASH_ENV, cwd: tmpdir(), rows: 24, cols: 80, graceMs: 1000 }

describe('dsh-subprocess-local plugin', () => {
  it('exports the plugin shape and provides ctx.subprocess', async () => {
    expect(local.name).toBe('dsh-subprocess-local')
    expect(local.inject).toEqual([])
    expect(local.Config.parse(undefined)).toEqual({ backlogBytes: 8 * 1024 * 1024, killWaitMs: 2000, exitCleanup: true, warmLaunch: true, envAllow: [] })
    const root = new Context()
    const fiber = await root.plugin(local)
    expect(root.subprocess).toBeInstanceOf(SubprocessRuntime)
    await fiber.dispose()
  })

  it('refuses to load a second provider into the same context', async () => {
    const root = new Context()
    const first = await root.plugin(local)
    await expect(root.plugin(local)).rejects.toThrow(/service "subprocess" has been registered/)
    await first.dispose()
  })

  it('refuses a durable spawn with INVALID_SPEC and starts nothing: its terminals end with this process', async () => {
    const root = new Context()
    const fiber = await root.plugin(local)
    const refused = root.subprocess.spawnTerminal({ ...spec, durable: { key: 'k', ttlMs: 1000, retainBytes: 1024 } })
    await expect(refused).rejects.toMatchObject({ code: 'INVALID_SPEC', message: expect.stringMatching(/dsh-subprocess-remote/) })
    await fiber.dispose()
  })

  it('rejects invalid config', async () => {
    const root = new Context()
    await expect(root.plugin(local, { killWaitMs: 0 })).rejects.toThrow(/killWaitMs/)
  })

  // isAlive (dsh-testkit) reads /proc: Linux only.
  it.skipIf(process.platform !== 'linux')('terminates every terminal when the plugin unloads', async () => {
    const root = new Context()
    const fiber = await root.plugin(local)
    const shells = await Promise.all([root.subprocess.spawnTerminal(spec), root.subprocess.spawnTerminal(spec)])
    for (const shell of shells) await capture(shell).waitFor(/PROMPT\$ $/)
    const job = await startJob(shells[0]!)
    await fiber.dispose()
    for (const shell of shells) {
      expect(shell.exit).toBeDefined()
      expect(isAlive(shell.pid)).toBe(false)
    }
    expect(isAlive(job)).toBe(false)
  })

  it('fails spawn with UNSUPPORTED_PLATFORM elsewhere', async () => {
    const root = new Context()
    const fiber = await root.plugin(local)
    const platform = Object.getOwnPropertyDescriptor(process, 'platform')!
    Object.defineProperty(process, 'platform', { value: 'win32' })
    try {
      await expect(root.subprocess.spawnTerminal(spec)).rejects.toMatchObject({ code: 'UNSUPPORTED_PLATFORM', message: expect.stringContaining('win32') })
    } finally {
      Object.defineProperty(process, 'platform', platform)
      await fiber.dispose()
    }
  })
})

/** Give the shell a background job so unload has a tree to tear down. */
async function startJob(shell: Awaited<ReturnType<SubprocessRuntime['spawnTerminal']>>): Promise<number> {
  const out = capture(shell)
  await shell.write('sleep 300 & echo JOB=$!\r')
  const pid = Number((await out.waitFor(/JOB=(\d+)/)).at(1))
  await eventually(() => isAlive(pid), 'the job')
  return pid
}
