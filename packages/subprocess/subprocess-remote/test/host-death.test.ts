import { descendants, eventually, identify, isAlive, type ProcessIdentity, stillRunning } from 'dsh-testkit'
import { isSubprocessError } from 'dsh-subprocess'
import { afterAll, describe, expect, it } from 'vitest'
import { bashSpec, collect, freshSocketPath, mountRemote, removeSocketDir } from './support/remote'

const socketPath = freshSocketPath()
const started: number[] = []

afterAll(() => {
  for (const pid of started) if (isAlive(pid)) process.kill(pid, 'SIGKILL')
  removeSocketDir(socketPath)
})

describe('the session host SIGKILLed', () => {
  it('pending calls reject SESSION_HOST_LOST, handles report exit, every process of their terminals is gone, the next use starts a fresh host', async () => {
    const remote = await mountRemote({ socketPath, idleExitMs: 1000 })
    try {
      const shells = await Promise.all([remote.runtime.spawnTerminal(bashSpec()), remote.runtime.spawnTerminal(bashSpec())])
      const hostPid = (await remote.runtime.sessionHostPid())!
      started.push(hostPid)
      // A tree in each: a background child that ignores SIGTERM and a foreground sleep.
      for (const shell of shells) collect(shell)
      for (const shell of shells) await shell.write("(trap '' TERM; exec sleep 301) & sleep 302\r")
      await eventually(() => shells.every((shell) => descendants(shell.pid).length >= 2), 'the trees')
      const tree: ProcessIdentity[] = shells.flatMap((shell) => [identify(shell.pid)!, ...descendants(shell.pid)])
      // A teardown that waits out a long grace is pending when the session host dies.
      const slow = await remote.runtime.spawnTerminal({ ...bashSpec(), graceMs: 60_000 })
      await slow.write("trap '' TERM HUP; sleep 303\r")
      await eventually(() => descendants(slow.pid).length >= 1, 'the slow tree')
      tree.push(identify(slow.pid)!, ...descendants(slow.pid))
      const pendingTerminate = slow.terminate().catch((error: unknown) => error)
      process.kill(hostPid, 'SIGKILL')
      expect(isSubprocessError(await pendingTerminate, 'SESSION_HOST_LOST')).toBe(true)
      for (const shell of shells) expect(await shell.done).toEqual({ exitCode: null, signal: 'SIGKILL' })
      const write = await shells[0]!.write('echo hi\r').catch((error: unknown) => error)
      expect(isSubprocessError(write, 'SESSION_HOST_LOST')).toBe(true)
      expect((write as Error).message).toMatch(/session host is gone/)
      expect(isSubprocessError(await shells[0]!.signalForeground('SIGINT').catch((error: unknown) => error), 'SESSION_HOST_LOST')).toBe(true)
      expect(await shells[0]!.inspectForeground()).toBeUndefined()
      await shells[0]!.terminate()
      // The host-death watchdog of dsh-subprocess-local takes every tree down.
      await eventually(() => tree.every((identity) => !stillRunning(identity)), 'every process of the terminals to be gone')
      // The next spawn starts a fresh session host.
      const fresh = await remote.runtime.spawnTerminal(bashSpec())
      const freshPid = (await remote.runtime.sessionHostPid())!
      started.push(freshPid)
      expect(freshPid).not.toBe(hostPid)
      const text = collect(fresh)
      await fresh.write('echo fresh-$((2+3))\r')
      await eventually(() => text().includes('fresh-5'), 'the fresh terminal')
      await fresh.terminate()
    } finally {
      await remote.dispose()
    }
  })
})
