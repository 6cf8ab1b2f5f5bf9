import { Context } from '@deepseek-ai/cordis'
import { sessionHostCommand } from 'dsh-session-host'
import { isSubprocessError } from 'dsh-subprocess'
import { descendants, eventually } from 'dsh-testkit'
import { afterAll, describe, expect, it } from 'vitest'
import * as remotePlugin from '../src/index'
import { bashSpec, cleanupAtEnd, collect, mountRemote } from './support/remote'

// Named targets: one provider, terminals on several session hosts at once, one connection each.
// `far` is a second session host reached through a connect command (`--stdio` relaying to a socket of
// its own), as an ssh or `podman exec` target reaches one on another machine.
const cleanup = cleanupAtEnd()
const localSocket = cleanup.socket()
const farSocket = cleanup.socket()
afterAll(() => cleanup.stop())

const far = { connect: [...sessionHostCommand(), '--stdio', '--socket', farSocket, '--idle-exit-ms', '0'] }

describe('named targets of dsh-subprocess-remote', () => {
  it('spawns on the named target and on the default one, each in its own session host; lists detached terminals with their target', async () => {
    const remote = await mountRemote({ socketPath: localSocket, idleExitMs: 0, targets: { far } })
    try {
      expect(remote.runtime.targetNames()).toEqual(['local', 'far'])
      const here = await remote.runtime.spawnTerminal(bashSpec())
      const there = await remote.runtime.spawnTerminal(bashSpec({ target: 'far', durable: { key: 'far-1', ttlMs: 60_000, retainBytes: 65_536 } }))
      const localHost = (await remote.runtime.sessionHostPid())!
      const farHost = (await remote.runtime.sessionHostPid('far'))!
      cleanup.process(localHost)
      cleanup.process(farHost)
      expect(farHost).not.toBe(localHost)
      // Each terminal is a process of the session host of its target.
      expect(descendants(localHost).map((child) => child.pid)).toContain(here.pid)
      expect(descendants(farHost).map((child) => child.pid)).toContain(there.pid)
      const text = collect(there)
      await there.write('echo far-$((20+22))\r')
      await eventually(() => text().includes('far-42'), 'the echo on the far target')
      // Nothing is detached yet; the far target is asked because it is connected.
      expect(await remote.runtime.listDetached()).toEqual([])
      await here.terminate()
    } finally {
      await remote.dispose()
    }
    const again = await mountRemote({ socketPath: localSocket, idleExitMs: 0, targets: { far } })
    try {
      // A listing connects to the far target (nothing used it yet) and finds the terminal detached there.
      expect(await again.runtime.listDetached()).toEqual([expect.objectContaining({ key: 'far-1', target: 'far' })])
      expect(again.runtime.unreachableTargets()).toEqual([])
      const adopted = await again.runtime.adoptTerminal('far-1', 'far')
      expect(await again.runtime.listDetached()).toEqual([])
      const text = collect(adopted.handle)
      await eventually(() => text().includes('far-42'), 'the replay from the far target')
      await adopted.handle.terminate()
    } finally {
      await again.dispose()
    }
  })

  it('a detached terminal on a connected target is listed with that target', async () => {
    const first = await mountRemote({ socketPath: localSocket, idleExitMs: 0, targets: { far } })
    await first.runtime.spawnTerminal(bashSpec({ target: 'far', durable: { key: 'far-2', ttlMs: 60_000, retainBytes: 65_536 } }))
    await first.dispose()
    const second = await mountRemote({ socketPath: localSocket, idleExitMs: 0, targets: { far } })
    try {
      const probe = await second.runtime.spawnTerminal(bashSpec({ target: 'far' }))
      const listed = await eventually(
        async () => (await second.runtime.listDetached()).find((terminal) => terminal.key === 'far-2'),
        'the detached far terminal',
      )
      expect(listed.target).toBe('far')
      const adopted = await second.runtime.adoptTerminal('far-2', 'far')
      await adopted.handle.terminate()
      await probe.terminate()
    } finally {
      await second.dispose()
    }
  })

  it('a target that cannot be reached is named unreachable by a listing, which still answers with the others', async () => {
    // `silent` runs but never says hello (a host that accepts the connection and hangs); `gone` cannot run at all.
    const targets = { far, silent: { connect: ['sleep', '1000'] }, gone: { connect: ['/nonexistent/dsh-connect'] } }
    const first = await mountRemote({ socketPath: localSocket, idleExitMs: 0, targets: { far } })
    await first.runtime.spawnTerminal(bashSpec({ target: 'far', durable: { key: 'far-3', ttlMs: 60_000, retainBytes: 65_536 } }))
    await first.dispose()
    const remote = await mountRemote({ socketPath: localSocket, idleExitMs: 0, startTimeoutMs: 60_000, listTimeoutMs: 1_000, targets })
    try {
      const listed = await eventually(async () => {
        const terminals = await remote.runtime.listDetached()
        return terminals.some((terminal) => terminal.key === 'far-3') && terminals
      }, 'the detached far terminal')
      expect(listed.map((terminal) => [terminal.key, terminal.target])).toContainEqual(['far-3', 'far'])
      expect(
        remote.runtime
          .unreachableTargets()
          .map((entry) => entry.target)
          .sort(),
      ).toEqual(['gone', 'silent'])
      expect(remote.runtime.unreachableTargets().find((entry) => entry.target === 'silent')?.reason).toMatch(/no answer within 1000 ms/)
      const adopted = await remote.runtime.adoptTerminal('far-3', 'far')
      await adopted.handle.terminate()
    } finally {
      await remote.dispose()
    }
  })

  it('defaultTarget runs unnamed spawns on that target', async () => {
    const remote = await mountRemote({ socketPath: localSocket, idleExitMs: 0, targets: { far }, defaultTarget: 'far' })
    try {
      expect(remote.runtime.targetNames()).toEqual(['far', 'local'])
      const shell = await remote.runtime.spawnTerminal(bashSpec())
      const farHost = (await remote.runtime.sessionHostPid())!
      cleanup.process(farHost)
      expect(descendants(farHost).map((child) => child.pid)).toContain(shell.pid)
      await shell.terminate()
    } finally {
      await remote.dispose()
    }
  })

  it('an unknown target is UNKNOWN_TARGET naming the ones there are; a malformed one INVALID_SPEC', async () => {
    const remote = await mountRemote({ socketPath: localSocket, idleExitMs: 0, targets: { far } })
    try {
      const unknown = await remote.runtime.spawnTerminal(bashSpec({ target: 'nowhere' })).catch((error: unknown) => error)
      expect(isSubprocessError(unknown, 'UNKNOWN_TARGET')).toBe(true)
      expect((unknown as Error).message).toMatch(/"local", "far"/)
      const malformed = await remote.runtime.spawnTerminal(bashSpec({ target: '../x' })).catch((error: unknown) => error)
      expect(isSubprocessError(malformed, 'INVALID_SPEC')).toBe(true)
      const adoption = await remote.runtime.adoptTerminal('k', 'nowhere').catch((error: unknown) => error)
      expect(isSubprocessError(adoption, 'UNKNOWN_TARGET')).toBe(true)
    } finally {
      await remote.dispose()
    }
  })

  it('refuses a configuration with a bad target name, a target called local, or a default that is not a target', async () => {
    for (const config of [{ targets: { 'bad name': far } }, { targets: { local: far } }, { defaultTarget: 'far' }]) {
      const root = new Context()
      await expect(root.plugin(remotePlugin, { socketPath: localSocket, ...config } as never)).rejects.toThrow(/target/)
    }
  })
})
