/**
 * Attacks on a listing across targets, with real session hosts: one target hangs (its connect
 * command never says hello) while another flaps (its connect command reaches its session host only
 * while a gate file exists). The listing must answer with what it reached, name the rest, and see
 * the flapping target again once it is back.
 */
import { randomBytes } from 'node:crypto'
import { rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sessionHostCommand } from 'dsh-session-host'
import { eventually } from 'dsh-testkit'
import { afterAll, describe, expect, it } from 'vitest'
import { bashSpec, cleanupAtEnd, mountRemote } from './support/remote'

const cleanup = cleanupAtEnd()
const localSocket = cleanup.socket()
const flapSocket = cleanup.socket()
const gate = join(tmpdir(), `dsh-listing-gate-${randomBytes(6).toString('hex')}`)
afterAll(async () => {
  rmSync(gate, { force: true })
  await cleanup.stop()
})

// Reaches its session host only while the gate exists; otherwise it fails at once, as a refused ssh does.
const flap = { connect: ['sh', '-c', 'test -e "$0" && exec "$@"', gate, ...sessionHostCommand(), '--stdio', '--socket', flapSocket, '--idle-exit-ms', '0'] }
const hang = { connect: ['sleep', '1000'] }

/** The names of the targets the last listing could not reach, sorted. */
function unreachableNames(runtime: { unreachableTargets(): readonly { target: string }[] }): string[] {
  return runtime
    .unreachableTargets()
    .map((entry) => entry.target)
    .sort()
}

describe('a listing while one target hangs and another flaps', () => {
  it('names the hanging and the downed targets, lists the rest, and lists the flapping one again once it is back', async () => {
    writeFileSync(gate, '')
    const remote = await mountRemote({
      socketPath: localSocket,
      idleExitMs: 0,
      startTimeoutMs: 60_000,
      listTimeoutMs: 500,
      livenessMs: 300,
      targets: { flap, hang },
    })
    try {
      const there = await remote.runtime.spawnTerminal(bashSpec({ target: 'flap', durable: { key: 'flap-1', ttlMs: 60_000, retainBytes: 65_536 } }))
      cleanup.process((await remote.runtime.sessionHostPid('flap'))!)
      const here = await remote.runtime.spawnTerminal(bashSpec({ durable: { key: 'here-1', ttlMs: 60_000, retainBytes: 65_536 } }))
      cleanup.process((await remote.runtime.sessionHostPid())!)
      await remote.dispose()
      expect(there.pid).toBeGreaterThan(0)
      expect(here.pid).toBeGreaterThan(0)
    } catch (error) {
      await remote.dispose()
      throw error
    }

    // A fresh provider: the flapping target is down, the hanging one never answers.
    rmSync(gate)
    const next = await mountRemote({
      socketPath: localSocket,
      idleExitMs: 0,
      startTimeoutMs: 60_000,
      listTimeoutMs: 500,
      livenessMs: 300,
      targets: { flap, hang },
    })
    try {
      const down = await next.runtime.listDetached()
      expect(down.map((terminal) => terminal.key)).toContain('here-1')
      expect(down.map((terminal) => terminal.key)).not.toContain('flap-1')
      expect(unreachableNames(next.runtime)).toEqual(['flap', 'hang'])
      // Back: a later listing connects anew and finds its terminal; the hanging target is still named.
      writeFileSync(gate, '')
      const back = await eventually(async () => {
        const terminals = await next.runtime.listDetached()
        return terminals.some((terminal) => terminal.key === 'flap-1') && terminals
      }, 'the flapping target to be listed again')
      expect(back.map((terminal) => [terminal.key, terminal.target])).toContainEqual(['flap-1', 'flap'])
      expect(unreachableNames(next.runtime)).toEqual(['hang'])
      const flapHost = (await next.runtime.sessionHostPid('flap'))!
      cleanup.process(flapHost)
      for (const adopted of [await next.runtime.adoptTerminal('flap-1', 'flap'), await next.runtime.adoptTerminal('here-1')]) await adopted.handle.terminate()
    } finally {
      await next.dispose()
    }
  }, 60_000)
})
