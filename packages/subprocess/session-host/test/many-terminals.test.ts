import { descendants, eventually, isAlive, processName } from 'dsh-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type HostProcess, startHostProcess } from './support/host-process'
import { bashSpawn, socketClient } from './support/wire-client'

const COUNT = 200

let host: HostProcess
beforeAll(async () => {
  host = await startHostProcess()
})
afterAll(() => host?.stop())

describe('200 terminals in one session host', () => {
  it('opens them all, each echoes its own line, and closing all leaves no process of theirs', async () => {
    const client = await socketClient(host.socketPath)
    const opened: { terminal: number; pid: number }[] = []
    // Opened in batches, as a busy agent would: 2 cores, so not all 200 bash startups at once.
    for (let batch = 0; batch < COUNT; batch += 20) {
      const spawned = await Promise.all(Array.from({ length: 20 }, () => client.ok('spawn', bashSpawn()) as Promise<{ terminal: number; pid: number }>))
      opened.push(...spawned)
    }
    expect(new Set(opened.map((entry) => entry.terminal)).size).toBe(COUNT)
    await Promise.all(
      opened.map(({ terminal }) => client.ok('write', { terminal, data: Buffer.from(`echo mark-${terminal}-$((${terminal}*3))\r`).toString('base64') })),
    )
    await eventually(
      () =>
        opened.every(({ terminal }) =>
          client.terminals
            .get(terminal)
            ?.text()
            .includes(`mark-${terminal}-${terminal * 3}`),
        ),
      'every echo',
      60_000,
    )
    // Each terminal saw only its own echo.
    for (const { terminal } of opened)
      expect(
        client.terminals
          .get(terminal)!
          .text()
          .match(/mark-\d+-\d+/g),
      ).toEqual([`mark-${terminal}-${terminal * 3}`])
    await Promise.all(opened.map(({ terminal }) => client.ok('terminate', { terminal })))
    expect(opened.filter(({ pid }) => isAlive(pid))).toEqual([])
    expect(descendants(host.pid).filter((child) => processName(child.pid) === 'bash')).toEqual([])
    client.close()
  }, 120_000)
})
