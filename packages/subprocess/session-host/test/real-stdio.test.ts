import { type ChildProcess, spawn } from 'node:child_process'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { eventually, isAlive } from 'dsh-testkit'
import { afterAll, describe, expect, it } from 'vitest'
import { type AdoptResult, type HelloMessage, type ListResult, sessionHostCommand } from '../src/index'
import { freshSocketPath, START_TIMEOUT_MS } from './support/host-process'
import { bashSpawn, type WireClient, wireClient } from './support/wire-client'

// `dsh-session-host --stdio` is a relay to the socket session host: two relays in a row (two ssh
// links, the first one cut) reach the same session host, so the second adopts what the first left.
const socketPath = freshSocketPath()
const relays: ChildProcess[] = []
let socketHostPid: number | undefined

afterAll(async () => {
  for (const relay of relays) if (relay.exitCode === null && relay.signalCode === null) relay.kill('SIGKILL')
  if (socketHostPid !== undefined && isAlive(socketHostPid)) {
    process.kill(socketHostPid, 'SIGTERM')
    await eventually(() => !isAlive(socketHostPid!), 'the socket session host to stop')
  }
  rmSync(join(socketPath, '..'), { recursive: true, force: true })
})

/** Run one relay; its client, its stderr and its exit. */
async function relay(): Promise<{ child: ChildProcess; client: WireClient; hello: HelloMessage; stderr: () => string; exited: Promise<number | null> }> {
  const [file = '', ...prefix] = sessionHostCommand()
  const child = spawn(file, [...prefix, '--stdio', '--socket', socketPath, '--idle-exit-ms', '0'], { stdio: ['pipe', 'pipe', 'pipe'] })
  relays.push(child)
  let stderr = ''
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const client = wireClient(child.stdout!, child.stdin!)
  const hello = await eventually(
    () => Promise.race([client.hello, new Promise<false>((resolve) => setTimeout(() => resolve(false), 50))]),
    'the hello through the relay',
    START_TIMEOUT_MS,
  )
  return { child, client, hello, stderr: () => stderr, exited }
}

describe('session host over --stdio (a relay to the socket session host)', () => {
  it('a cut link leaves the durable terminal detached; the next relay adopts it (replay, then live); non-durable ones die with the link', async () => {
    const first = await relay()
    // The hello is the socket session host's, started on first use (detached), not the relay's.
    expect(first.hello).toMatchObject({ version: 2, role: 'session-host' })
    socketHostPid = first.hello.pid
    expect(socketHostPid).not.toBe(first.child.pid)
    const durable = (await first.client.ok('spawn', bashSpawn({ durable: { key: 'over-ssh', ttlMs: 60_000, retainBytes: 1024 * 1024 } }))) as {
      terminal: number
      pid: number
    }
    const plain = (await first.client.ok('spawn', bashSpawn())) as { terminal: number; pid: number }
    await first.client.ok('write', { terminal: durable.terminal, data: Buffer.from('echo over-$((6*7))\r').toString('base64') })
    await eventually(() => first.client.terminals.get(durable.terminal)?.text().includes('over-42'), 'the echo over the first relay')
    // Any stray byte on stdout would have broken the framing: the client saw no protocol error.
    expect(first.client.errors).toEqual([])
    // The link is cut: the relay dies without a word.
    first.child.kill('SIGKILL')
    await first.exited
    await eventually(() => !isAlive(plain.pid), 'the non-durable terminal to end with its link')
    expect(isAlive(durable.pid)).toBe(true)

    const second = await relay()
    expect(second.hello.pid).toBe(socketHostPid)
    const listed = ((await second.client.ok('list', {})) as ListResult).terminals
    expect(listed).toMatchObject([{ key: 'over-ssh', pid: durable.pid }])
    const adopted = (await second.client.ok('adopt', { key: 'over-ssh' })) as AdoptResult
    expect(adopted.replayFrom).toBe(0)
    const seen = await eventually(() => second.client.terminals.get(adopted.terminal), 'the replay')
    await eventually(() => seen.text().includes('over-42'), 'the replay of the first link’s output')
    await second.client.ok('write', { terminal: adopted.terminal, data: Buffer.from('echo again-$((7*7))\r').toString('base64') })
    await eventually(() => seen.text().includes('again-49'), 'live output over the second relay')
    await second.client.ok('terminate', { terminal: adopted.terminal })
    expect(isAlive(durable.pid)).toBe(false)
    // The end of stdin ends the relay; the socket session host stays for the next one.
    second.child.stdin!.end()
    expect(await second.exited).toBe(0)
    expect(isAlive(socketHostPid!)).toBe(true)
    expect(second.stderr()).not.toContain('Error')
  })
})
