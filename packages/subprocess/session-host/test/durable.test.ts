import { descendants, eventually, identify, isAlive, type ProcessIdentity, stillRunning } from 'dsh-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AdoptResult, ListResult } from '../src/index'
import { type HostProcess, startHostProcess } from './support/host-process'
import { bashSpawn, socketClient, type WireClient } from './support/wire-client'

// Durable terminals (protocol version 2) on a real session host bin over its socket. The idle time
// is short on purpose: a detached terminal must keep the session host alive well past it.
const WINDOW = 64 * 1024
let host: HostProcess
const clients: WireClient[] = []

beforeAll(async () => {
  host = await startHostProcess(['--idle-exit-ms', '200', '--window-bytes', String(WINDOW)])
})
afterAll(async () => {
  for (const client of clients) client.close()
  await host?.stop()
})

async function connectClient(options: { autoAck?: boolean } = {}): Promise<WireClient> {
  const client = await socketClient(host.socketPath, options)
  clients.push(client)
  return client
}

const write = (on: WireClient, terminal: number, text: string) => on.ok('write', { terminal, data: Buffer.from(text).toString('base64') })

/** A durable bash on `on`, at its first prompt. */
async function durableBash(on: WireClient, key: string, durable: { ttlMs?: number; retainBytes?: number } = {}) {
  const { terminal, pid } = (await on.ok('spawn', bashSpawn({ durable: { key, ttlMs: 60_000, retainBytes: 1024 * 1024, ...durable } }))) as {
    terminal: number
    pid: number
  }
  await eventually(() => on.terminals.get(terminal)?.text().includes('$ '), 'the first prompt')
  return { terminal, pid, seen: on.terminals.get(terminal)! }
}

const list = async (on: WireClient) => ((await on.ok('list', {})) as ListResult).terminals

/** The detached terminal listed under `key`, if any. */
const detached = async (on: WireClient, key: string) => (await list(on)).find((terminal) => terminal.key === key)

describe('durable terminals over the socket', () => {
  it('detach on the client’s end (list shows it, facts kept), keep running past the idle time, adopt replays exactly and goes on live', async () => {
    const first = await connectClient()
    const shell = await durableBash(first, 'keep-1')
    const plain = (await first.ok('spawn', bashSpawn())) as { terminal: number; pid: number }
    await write(first, shell.terminal, 'echo before-$((1+1))\r')
    await eventually(() => shell.seen.text().includes('before-2'), 'the echo before the detach')
    await first.ok('setFacts', { terminal: shell.terminal, facts: '{"nonce":"n-42","prompt":"$ "}' })
    // Printed after the client went: the session host must read it while nobody is attached.
    await write(first, shell.terminal, 'sleep 1; echo while-$((2+2))-detached\r')
    const sleeper = await eventually(() => descendants(shell.pid)[0], 'the sleep')
    first.close()
    await first.closed
    // A non-durable terminal of the same client still dies with it.
    await eventually(() => !isAlive(plain.pid), 'the plain terminal to end with its client')
    // With no client at all for longer than the idle time (the whole sleep), the session host stays.
    await eventually(() => !stillRunning(sleeper), 'the sleep to end while nobody is connected')
    expect(isAlive(host.pid)).toBe(true)
    expect(isAlive(shell.pid)).toBe(true)

    const second = await connectClient()
    const listed = await eventually(async () => {
      const terminal = await detached(second, 'keep-1')
      return terminal && terminal.outputBytes > shell.seen.end && terminal
    }, 'the output printed while detached')
    expect(listed).toMatchObject({ key: 'keep-1', pid: shell.pid, facts: '{"nonce":"n-42","prompt":"$ "}' })
    expect(listed.exit).toBeUndefined()
    expect(listed.detachedAt).toBeLessThanOrEqual(Date.now())
    const adopted = (await second.ok('adopt', { key: 'keep-1' })) as AdoptResult
    expect(adopted).toMatchObject({ pid: shell.pid, facts: '{"nonce":"n-42","prompt":"$ "}', replayFrom: 0 })
    const seen = await eventually(() => second.terminals.get(adopted.terminal), 'the replay')
    await eventually(() => seen.text().includes('while-4-detached'), 'the replay of what was printed while detached')
    // Exactly the stream: what the first client saw is its prefix, offsets contiguous from replayFrom.
    expect(seen.start).toBe(0)
    expect(seen.gaps).toBe(0)
    expect(seen.text().startsWith(shell.seen.text())).toBe(true)
    expect(await detached(second, 'keep-1')).toBeUndefined()
    await write(second, adopted.terminal, 'echo live-$((3+3))\r')
    await eventually(() => seen.text().includes('live-6'), 'live output after the replay')
    await second.ok('terminate', { terminal: adopted.terminal })
    expect(isAlive(shell.pid)).toBe(false)
    expect(await second.call('adopt', { key: 'keep-1' })).toMatchObject({ ok: false, error: { code: 'TERMINAL_NOT_FOUND' } })
  })

  it('adoption is first come: of two concurrent adopters exactly one wins, the other gets TERMINAL_ADOPTED', async () => {
    const owner = await connectClient()
    const shell = await durableBash(owner, 'race-1')
    // Attached to a live connection: not for the taking.
    const bystander = await connectClient()
    expect(await bystander.call('adopt', { key: 'race-1' })).toMatchObject({ ok: false, error: { code: 'TERMINAL_ADOPTED' } })
    expect(await bystander.call('adopt', { key: 'no-such-key' })).toMatchObject({ ok: false, error: { code: 'TERMINAL_NOT_FOUND' } })
    // A second durable terminal under a key in use is refused.
    expect(await bystander.call('spawn', bashSpawn({ durable: { key: 'race-1', ttlMs: 1000, retainBytes: 1024 } }))).toMatchObject({
      ok: false,
      error: { code: 'INVALID_SPEC' },
    })
    owner.close()
    await eventually(() => detached(bystander, 'race-1'), 'the detach')
    const [left, right] = [await connectClient(), await connectClient()]
    const replies = await Promise.all([left.call('adopt', { key: 'race-1' }), right.call('adopt', { key: 'race-1' })])
    expect(replies.filter((reply) => reply.ok)).toHaveLength(1)
    expect(replies.filter((reply) => !reply.ok)).toMatchObject([{ ok: false, error: { code: 'TERMINAL_ADOPTED' } }])
    const [winner, terminal] = replies[0]!.ok
      ? [left, (replies[0]!.result as AdoptResult).terminal]
      : [right, (replies[1] as { result: AdoptResult }).result.terminal]
    await winner.ok('terminate', { terminal })
    expect(isAlive(shell.pid)).toBe(false)
  })

  it('facts: at most 16 KiB of UTF-8, durable terminals only (INVALID_SPEC otherwise)', async () => {
    const client = await connectClient()
    const shell = await durableBash(client, 'facts-1')
    const plain = (await client.ok('spawn', bashSpawn())) as { terminal: number }
    expect(await client.call('setFacts', { terminal: shell.terminal, facts: 'é'.repeat(8193) })).toMatchObject({ ok: false, error: { code: 'INVALID_SPEC' } })
    expect(await client.call('setFacts', { terminal: plain.terminal, facts: 'x' })).toMatchObject({ ok: false, error: { code: 'INVALID_SPEC' } })
    expect(await client.call('setFacts', { terminal: shell.terminal, facts: 'é'.repeat(8192) })).toMatchObject({ ok: true })
    await client.ok('terminate', { terminal: shell.terminal })
    await client.ok('terminate', { terminal: plain.terminal })
  })

  it('the TTL passes unadopted: the terminal and its whole tree are gone (by /proc), and it is no longer listed', async () => {
    const client = await connectClient()
    const shell = await durableBash(client, 'ttl-1', { ttlMs: 300 })
    await write(client, shell.terminal, "(trap '' TERM HUP; exec sleep 611) & sleep 612\r")
    await eventually(() => descendants(shell.pid).length >= 2, 'the tree')
    const tree: ProcessIdentity[] = [identify(shell.pid)!, ...descendants(shell.pid)]
    client.close()
    const watcher = await connectClient()
    await eventually(() => tree.every((identity) => !stillRunning(identity)), 'every process of the tree to be gone', 30_000)
    await eventually(async () => !(await detached(watcher, 'ttl-1')), 'the terminal to leave the list')
    expect(await watcher.call('adopt', { key: 'ttl-1' })).toMatchObject({ ok: false, error: { code: 'TERMINAL_NOT_FOUND' } })
  })

  it('a program that exits while detached stays listed with its exit; its adopter gets the replay, then the exit', async () => {
    const client = await connectClient()
    const shell = await durableBash(client, 'exit-1')
    await write(client, shell.terminal, 'sleep 0.5; echo last-words; exit 3\r')
    client.close()
    const watcher = await connectClient()
    const listed = await eventually(async () => {
      const terminal = await detached(watcher, 'exit-1')
      return terminal?.exit && terminal
    }, 'the exit while detached')
    expect(listed).toMatchObject({ key: 'exit-1', exit: { exitCode: 3, signal: null } })
    const adopted = (await watcher.ok('adopt', { key: 'exit-1' })) as AdoptResult
    const seen = await eventually(() => watcher.terminals.get(adopted.terminal)?.exit && watcher.terminals.get(adopted.terminal), 'the exit after the replay')
    expect(seen.text()).toContain('last-words')
    expect(seen.end).toBe(listed.outputBytes)
    const mine = watcher.events.filter((event) => event.endsWith(`:${adopted.terminal}`) && !event.startsWith('reply'))
    expect(mine.at(-1)).toBe(`exit:${adopted.terminal}`)
    await watcher.ok('terminate', { terminal: adopted.terminal })
  })

  it('a flood while detached keeps only the newest max(retainBytes, window) bytes: replayFrom moves, the replay ends at the newest byte', async () => {
    const retainBytes = 100_000
    const client = await connectClient()
    const shell = await durableBash(client, 'flood-1', { retainBytes })
    await write(client, shell.terminal, "sleep 0.3; head -c 3000000 /dev/zero | tr '\\0' x; echo; echo flood-$((5*5))-done\r")
    client.close()
    const watcher = await connectClient()
    // The PTY is read on with nobody attached (never paused at the window of 64 KiB), to the prompt after the flood.
    const listed = await eventually(
      async () => {
        const terminal = await detached(watcher, 'flood-1')
        return terminal && terminal.outputBytes > 3_000_000 && descendants(shell.pid).length === 0 && terminal
      },
      'the flood while detached, to its end',
      60_000,
    )
    const settled = (await detached(watcher, 'flood-1'))!
    const adopted = (await watcher.ok('adopt', { key: 'flood-1' })) as AdoptResult
    const seen = await eventually(() => watcher.terminals.get(adopted.terminal), 'the replay')
    await eventually(() => seen.text().includes('flood-25-done'), 'the newest bytes')
    const held = Math.max(retainBytes, WINDOW)
    expect(adopted.replayFrom).toBeGreaterThan(0)
    expect(seen.start).toBe(adopted.replayFrom)
    expect(seen.gaps).toBe(0)
    // What was replayed is bounded by the ring (plus the prompt drawn after the flood).
    expect(seen.end - adopted.replayFrom).toBeLessThanOrEqual(held + 1024)
    expect(adopted.replayFrom).toBeGreaterThanOrEqual(settled.outputBytes - held)
    expect(listed.outputBytes).toBeGreaterThan(3_000_000)
    await watcher.ok('terminate', { terminal: adopted.terminal })
  }, 90_000)

  it('answers a ping with a pong carrying the same nonce', async () => {
    const client = await connectClient()
    client.channel.send({ type: 'ping', nonce: 4242 })
    await eventually(() => client.others.some((message) => message.type === 'pong'), 'the pong')
    expect(client.others).toEqual([{ type: 'pong', nonce: 4242 }])
  })
})
