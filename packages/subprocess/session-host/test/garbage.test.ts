import { randomBytes } from 'node:crypto'
import { connect } from 'node:net'
import { eventually, isAlive } from 'dsh-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { encodeControl } from './support/facts'
import { type HostProcess, startHostProcess } from './support/host-process'
import { bashSpawn, socketClient } from './support/wire-client'

let host: HostProcess
beforeAll(async () => {
  host = await startHostProcess()
})
afterAll(() => host?.stop())

/** Send `bytes` on a fresh connection and resolve once the session host hung up (or the bytes were taken). */
function attack(bytes: Buffer): Promise<void> {
  return new Promise((resolve) => {
    const raw = connect(host.socketPath)
    raw.on('error', () => resolve())
    raw.on('close', () => resolve())
    raw.on('data', () => {})
    raw.write(bytes, () => raw.end())
  })
}

describe('a session host fed garbage', () => {
  it('survives random bytes, truncated frames and frames after a bad hello, and keeps serving a well-behaved client', async () => {
    const client = await socketClient(host.socketPath)
    const { terminal } = (await client.ok('spawn', bashSpawn())) as { terminal: number }
    const hello = encodeControl({ type: 'hello', version: 2, role: 'client', features: ['binary-output', 'credit'] })
    const attacks: Buffer[] = [
      randomBytes(64 * 1024),
      Buffer.concat([hello, randomBytes(64 * 1024)]),
      Buffer.concat([
        hello,
        encodeControl({ type: 'request', id: 1, method: 'spawn', params: { argv: 'not-an-array', env: JSON.parse('{"__proto__": "x"}') } }),
      ]),
      Buffer.concat([hello, encodeControl({ type: 'ack', terminal: 1, offset: 1e18 }), encodeControl({ type: 'request', id: -5, method: 'write' })]),
      Buffer.concat([hello, encodeControl({ type: 'request', id: 2, method: 'signalForeground', params: { terminal: 1, signal: 'toString' } })]),
      Buffer.concat([hello, hello.subarray(0, 7)]),
    ]
    for (const bytes of attacks) await attack(bytes)
    expect(isAlive(host.pid)).toBe(true)
    await client.ok('write', { terminal, data: Buffer.from('echo survived-$((9*9))\r').toString('base64') })
    await eventually(() => client.terminals.get(terminal)?.text().includes('survived-81'), 'the echo after the garbage')
    await client.ok('terminate', { terminal })
    client.close()
  })
})

describe('a client that keeps asking and never reads', () => {
  it('is hung up on with NOT_READING once its unread replies pass the bound (so they cannot grow without end); the session host keeps serving', async () => {
    const raw = connect(host.socketPath)
    raw.pause()
    const closed = new Promise<void>((resolve) => raw.on('close', () => resolve()))
    raw.on('error', () => {})
    const hello = encodeControl({ type: 'hello', version: 2, role: 'client', features: ['binary-output', 'credit'] })
    // Each asks about a terminal it does not hold: every reply is an error frame of ~130 bytes.
    const asks = Array.from({ length: 300_000 }, (_, index) =>
      encodeControl({ type: 'request', id: index + 1, method: 'resize', params: { terminal: 7, rows: 1, cols: 1 } }),
    )
    raw.write(Buffer.concat([hello, ...asks]))
    await eventually(() => host.stderr().includes('NOT_READING'), 'the hang-up', 60_000)
    raw.destroy()
    await closed
    expect(isAlive(host.pid)).toBe(true)
    const client = await socketClient(host.socketPath)
    const { terminal } = (await client.ok('spawn', bashSpawn())) as { terminal: number }
    await client.ok('terminate', { terminal })
    client.close()
  }, 90_000)
})
