import { spawn } from 'node:child_process'
import { eventually, isAlive } from 'dsh-testkit'
import { describe, expect, it } from 'vitest'
import { sessionHostCommand } from '../src/index'
import { START_TIMEOUT_MS } from './support/host-process'
import { bashSpawn, wireClient } from './support/wire-client'

describe('session host over --stdio (one client on stdin/stdout)', () => {
  it('serves bash; logs go to stderr only; the end of stdin ends its terminals and the session host', async () => {
    const [file = '', ...prefix] = sessionHostCommand()
    const child = spawn(file, [...prefix, '--stdio'], { stdio: ['pipe', 'pipe', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    const client = wireClient(child.stdout, child.stdin)
    const hello = await eventually(
      () => Promise.race([client.hello, new Promise<false>((resolve) => setTimeout(() => resolve(false), 50))]),
      'the hello',
      START_TIMEOUT_MS,
    )
    expect(hello).toMatchObject({ version: 1, role: 'session-host', pid: child.pid })
    const { terminal, pid } = (await client.ok('spawn', bashSpawn())) as { terminal: number; pid: number }
    await client.ok('write', { terminal, data: Buffer.from('echo over-$((6*7))\r').toString('base64') })
    await eventually(() => client.terminals.get(terminal)?.text().includes('over-42'), 'the echo over stdio')
    // Any stray byte on stdout would have broken the framing: the client saw no protocol error.
    expect(client.errors).toEqual([])
    child.stdin.end()
    expect(await exited).toBe(0)
    expect(isAlive(pid)).toBe(false)
    expect(stderr).not.toContain('Error')
  })
})
