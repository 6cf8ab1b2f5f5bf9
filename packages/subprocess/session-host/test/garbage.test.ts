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
    const hello = encodeControl({ type: 'hello', version: 1, role: 'client', features: ['binary-output', 'credit'] })
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
