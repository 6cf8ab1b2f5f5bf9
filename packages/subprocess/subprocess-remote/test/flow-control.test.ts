import { readFileSync } from 'node:fs'
import { eventually, isAlive } from 'dsh-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bashSpec, type MountedRemote, mountRemote, removeSocketDir } from './support/remote'

/** Output far beyond the session host's window and the PTY's buffer. */
const TOTAL = 12 * 1024 * 1024

let remote: MountedRemote
let socketPath: string
beforeAll(async () => {
  remote = await mountRemote({ idleExitMs: 500 })
  socketPath = (remote.runtime as unknown as { config: { socketPath: string } }).config.socketPath
})
afterAll(async () => {
  const pid = await remote.runtime.sessionHostPid()
  await remote.dispose()
  await eventually(() => !pid || !isAlive(pid), 'the session host to exit when idle')
  removeSocketDir(socketPath)
})

/** What a process wrote so far (`wchar` of /proc/<pid>/io). */
function bytesWritten(pid: number): number {
  const line = readFileSync(`/proc/${pid}/io`, 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('wchar:'))
  return Number(line?.split(/\s+/)[1] ?? Number.NaN)
}

describe('flow control end to end: a terminal nobody listens to', () => {
  it('stalls the program (blocked in its writes), then delivers every byte, in order, to the first listener', async () => {
    const handle = await remote.runtime.spawnTerminal({
      ...bashSpec(),
      argv: ['sh', '-c', `stty -opost; yes 0123456789 | head -c ${TOTAL}; exec sleep 300`],
    })
    // Nobody subscribed: the client holds what came and does not acknowledge it, so the session host
    // pauses the PTY at its window and the writers block (every thread in front is blocked, none runs).
    const stalled = await eventually(async () => {
      const facts = await handle.inspectForeground()
      // `sh -c` has no job control: `yes` and `head` run in its group, beside it waiting in wait4.
      const writers = (facts?.threads ?? []).filter((thread) => thread.pid !== handle.pid)
      return (
        writers.length >= 2 &&
        writers.every((thread) => thread.state === 'blocked' && thread.syscall !== undefined && thread.syscallName === undefined) &&
        writers
      )
    }, 'the writers to block')
    // Blocked in a syscall that is none of the waits the provider names: their writes. `head`
    // and `yes` have written only about a window (plus the PTY's buffer) of its 12 MiB: it is held, not slow.
    expect(stalled.map((thread) => thread.state)).toEqual(['blocked', 'blocked'])
    const written = Math.max(...stalled.map((thread) => bytesWritten(thread.pid)))
    expect(written).toBeLessThan(4 * 1024 * 1024)
    const chunks: Buffer[] = []
    handle.onOutput((chunk) => chunks.push(chunk))
    await eventually(() => chunks.reduce((sum, chunk) => sum + chunk.length, 0) >= TOTAL, 'every byte', 60_000)
    const all = Buffer.concat(chunks)
    expect(all.length).toBe(TOTAL)
    expect(all.equals(Buffer.from('0123456789\n'.repeat(Math.ceil(TOTAL / 11)).slice(0, TOTAL)))).toBe(true)
    await handle.terminate()
  }, 90_000)
})
