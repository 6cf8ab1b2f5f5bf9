import { readFileSync } from 'node:fs'
import { eventually } from 'dsh-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type HostProcess, startHostProcess } from './support/host-process'
import { socketClient, testEnv } from './support/wire-client'

const WINDOW = 64 * 1024
/** Exactly this many bytes of output: `head -c` of an endless `yes`. */
const TOTAL = 40 * 1024 * 1024

let host: HostProcess
beforeAll(async () => {
  host = await startHostProcess(['--window-bytes', String(WINDOW)])
})
afterAll(() => host?.stop())

/** A spawn request running `script` under sh in a 24×80 terminal. */
function shellSpawn(script: string) {
  return { argv: ['sh', '-c', script], cwd: '/', env: testEnv(), rows: 24, cols: 80, graceMs: 500 }
}

/** The session host's resident memory in bytes (from /proc). */
function rss(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('VmRSS:'))!
  return Number(line.replace(/\D+/g, '')) * 1024
}

describe('flow control: a client that does not acknowledge pauses only its terminal', () => {
  it('a flood stalls at the window, memory stays bounded, and after acks every byte arrives in order', async () => {
    const reader = await socketClient(host.socketPath, { autoAck: false })
    const busy = await socketClient(host.socketPath)
    const flood = (await reader.ok('spawn', shellSpawn(`stty -opost; yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c ${TOTAL}; exec sleep 300`))) as {
      terminal: number
    }
    const seen = () => reader.terminals.get(flood.terminal)
    // Without acks the session host sends a window (and at most a read or two past it), then stops.
    await eventually(() => (seen()?.bytes ?? 0) >= WINDOW, 'a window of output')
    const before = rss(host.pid)
    // Meanwhile another client's terminal is served as usual.
    const other = (await busy.ok('spawn', shellSpawn('echo served; sleep 300'))) as { terminal: number }
    await eventually(() => busy.terminals.get(other.terminal)?.text().includes('served'), 'the other client’s output')
    // Held at the window (plus what the PTY had read when the pause took effect), of 40 MiB waiting.
    expect(seen()!.bytes).toBeLessThan(WINDOW + 256 * 1024)
    expect(rss(host.pid) - before).toBeLessThan(32 * 1024 * 1024)
    // Acknowledge as the bytes come: the rest flows, in order, nothing lost, nothing repeated.
    const pump = setInterval(() => reader.ackAll(flood.terminal), 1)
    try {
      await eventually(() => seen()!.bytes >= TOTAL, 'every byte', 120_000)
    } finally {
      clearInterval(pump)
    }
    const all = Buffer.concat(seen()!.chunks)
    expect(all.length).toBe(TOTAL)
    expect(seen()!.gaps).toBe(0)
    // Output post-processing is off (`stty -opost`): the bytes are exactly what `yes | head` wrote.
    const line = '0123456789abcdefghijklmnopqrstuvwxyz\n'
    expect(all.equals(Buffer.from(line.repeat(Math.ceil(TOTAL / line.length)).slice(0, TOTAL), 'latin1'))).toBe(true)
    reader.close()
    busy.close()
  }, 180_000)

  it('a program that exits while its output waits behind the window loses none of it: the rest follows the acks, then the exit', async () => {
    const reader = await socketClient(host.socketPath, { autoAck: false })
    // A window and a bit, then, once the session host has paused the terminal, a tail small enough for
    // the kernel to hold while the program exits.
    const total = WINDOW + 4096 + 3000
    const spawned = (await reader.ok(
      'spawn',
      shellSpawn(`stty -opost; head -c ${WINDOW + 4096} /dev/zero | tr '\\0' x; sleep 0.3; head -c 3000 /dev/zero | tr '\\0' x; exit 5`),
    )) as { terminal: number }
    const seen = () => reader.terminals.get(spawned.terminal)
    await eventually(() => (seen()?.bytes ?? 0) >= WINDOW, 'a window of output')
    // node-pty gives up waiting for a paused stream 200 ms after the program's exit: the exit is reported while the window is still full.
    await eventually(() => seen()?.exit !== undefined, 'the exit', 10_000)
    const pump = setInterval(() => reader.ackAll(spawned.terminal), 1)
    try {
      await eventually(() => seen()!.bytes >= total, 'every byte')
    } finally {
      clearInterval(pump)
    }
    expect(seen()!.exit).toEqual({ exitCode: 5, signal: null })
    const all = Buffer.concat(seen()!.chunks)
    expect(all.equals(Buffer.from('x'.repeat(total), 'latin1'))).toBe(true)
    expect(seen()!.gaps).toBe(0)
    reader.close()
  }, 60_000)
})
