/**
 * Attacks on the look that tells a session host's loss from a SIGKILL exit, with real processes:
 * a real session host behind a `--stdio` relay, a shell killed by SIGKILL, a relay that stops
 * carrying bytes (a cut network), a session host killed outright.
 */
import { randomBytes } from 'node:crypto'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import { hostRuntimeDir } from 'dsh-sandbox'
import { sessionHostCommand } from 'dsh-session-host'
import type { TerminalSpawnSpec } from 'dsh-subprocess'
import * as remotePlugin from 'dsh-subprocess-remote'
import { eventually, isAlive, processesWithArgs } from 'dsh-testkit'
import { afterAll, describe, expect, it } from 'vitest'
import { diedWithSessionHost } from '../src/session/durable-lost'

const socketPath = join(hostRuntimeDir(process.getuid?.() ?? -1), `test-lost-${randomBytes(6).toString('hex')}`, 'session-host.sock')
const pids = new Set<number>()
afterAll(async () => {
  for (const pid of pids) if (isAlive(pid)) process.kill(pid, 'SIGKILL')
  await eventually(() => [...pids].every((pid) => !isAlive(pid)), 'the session hosts and relays of this file to end')
  rmSync(join(socketPath, '..'), { recursive: true, force: true })
})

const bash: TerminalSpawnSpec = { argv: ['bash', '--noprofile', '--norc', '-i'], cwd: '/', env: { PS1: '$ ', TERM: 'dumb' }, rows: 24, cols: 80, graceMs: 1000 }

/** Pids of live relays (`--stdio`) of this file's socket path. */
const relayPids = (): number[] => processesWithArgs('--stdio', socketPath)

/** The remote provider through a relay, its session host and relay recorded for the end. */
async function mounted() {
  const earlier = new Set(relayPids())
  const root = new Context()
  const connect = [...sessionHostCommand(), '--stdio', '--socket', socketPath, '--idle-exit-ms', '0']
  const fiber = await root.plugin(remotePlugin, { connect, livenessMs: 300 })
  const runtime = root.subprocess as remotePlugin.RemoteSubprocessRuntime
  const handle = await runtime.spawnTerminal(bash)
  handle.onOutput(() => {})
  const hostPid = (await runtime.sessionHostPid())!
  pids.add(hostPid)
  const [relay] = relayPids().filter((pid) => !earlier.has(pid))
  expect(relay).toBeDefined()
  pids.add(relay!)
  return { handle, hostPid, relay: relay!, dispose: () => fiber.dispose() }
}

describe('diedWithSessionHost over a real link', () => {
  it('a shell killed by SIGKILL itself: an exit, not a loss', async () => {
    const { handle, dispose } = await mounted()
    try {
      process.kill(handle.pid, 'SIGKILL')
      expect(await handle.done).toMatchObject({ signal: 'SIGKILL' })
      expect(await diedWithSessionHost(handle)).toBe(false)
    } finally {
      await dispose()
    }
  }, 30_000)

  it('a relay that stops carrying bytes (a cut network): the terminal ends as SIGKILL and is not a session-host loss (its send ends as session_exit, see ssh-target-link.test.ts)', async () => {
    const { handle, relay, dispose } = await mounted()
    try {
      process.kill(relay, 'SIGSTOP')
      expect(await handle.done).toEqual({ exitCode: null, signal: 'SIGKILL' })
      expect(await diedWithSessionHost(handle)).toBe(false)
    } finally {
      process.kill(relay, 'SIGCONT')
      await dispose()
    }
  }, 30_000)

  it('a session host killed outright: lost (SESSION_HOST_LOST)', async () => {
    const { handle, hostPid, dispose } = await mounted()
    try {
      process.kill(hostPid, 'SIGKILL')
      expect(await handle.done).toMatchObject({ signal: 'SIGKILL' })
      expect(await diedWithSessionHost(handle)).toBe(true)
    } finally {
      await dispose()
    }
  }, 30_000)
})
