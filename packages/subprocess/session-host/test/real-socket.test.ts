import { connect } from 'node:net'
import { descendants, eventually, isAlive, processName } from 'dsh-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Frame, FrameDecoder } from '../src/index'
import { encodeControl, type ForegroundFactsLike } from './support/facts'
import { type HostProcess, startHostProcess } from './support/host-process'
import { bashSpawn, socketClient, testEnv, type WireClient } from './support/wire-client'

// A real session host bin over its Unix socket, driven frame by frame.
let host: HostProcess
let client: WireClient

beforeAll(async () => {
  host = await startHostProcess([], undefined, { LEAK_CHECK: 'from-the-session-host' })
  client = await socketClient(host.socketPath)
})
afterAll(async () => {
  client?.close()
  await host?.stop()
})

/** Spawn bash on `on`; its terminal number, pid and what the test sees of it. */
async function bash(on: WireClient = client) {
  const { terminal, pid } = (await on.ok('spawn', bashSpawn())) as { terminal: number; pid: number }
  await eventually(() => on.terminals.get(terminal)?.text().includes('$ '), 'the first prompt')
  return { terminal, pid, seen: on.terminals.get(terminal)! }
}

const write = (on: WireClient, terminal: number, text: string) => on.ok('write', { terminal, data: Buffer.from(text).toString('base64') })

describe('session host over its socket: the handle contract', () => {
  it('says hello with version 2, its pid and its window', async () => {
    expect(await client.hello).toMatchObject({ type: 'hello', version: 2, role: 'session-host', pid: host.pid, windowBytes: 1024 * 1024 })
    expect(host.stdout()).toBe('')
  })

  it('spawns bash; writes come back as output with contiguous absolute offsets; resize reaches the PTY', async () => {
    const { terminal, seen } = await bash()
    await write(client, terminal, 'echo one-$((40+2))\r')
    await eventually(() => seen.text().includes('one-42'), 'the echo')
    await client.ok('resize', { terminal, rows: 31, cols: 101 })
    await write(client, terminal, 'stty size\r')
    await eventually(() => seen.text().includes('31 101'), 'the new size')
    expect(seen.gaps).toBe(0)
    expect(seen.bytes).toBe(Buffer.concat(seen.chunks).length)
    await client.ok('terminate', { terminal })
  })

  it('inspectForeground proves a stdin wait in `read`; signalForeground SIGINT ends a sleep; terminate leaves no process', async () => {
    const { terminal, pid, seen } = await bash()
    await write(client, terminal, "read -p 'name? ' answer\r")
    await eventually(() => seen.text().includes('name? '), 'the read prompt')
    const facts = (await eventually(async () => {
      const inspected = (await client.ok('inspectForeground', { terminal })) as ForegroundFactsLike | null
      return inspected?.stdinWaitProof === 'proven' && inspected
    }, 'a proven stdin wait')) as ForegroundFactsLike
    expect(facts.isShellGroup).toBe(true)
    await write(client, terminal, 'x\r')
    await write(client, terminal, 'sleep 300\r')
    const sleeper = await eventually(() => descendants(pid).find((child) => processName(child.pid) === 'sleep'), 'the sleep')
    const pgid = await eventually(async () => {
      const inspected = (await client.ok('inspectForeground', { terminal })) as ForegroundFactsLike | null
      return inspected && !inspected.isShellGroup && inspected.processGroupId
    }, 'the sleep in front')
    expect(await client.ok('signalForeground', { terminal, signal: 'SIGINT' })).toBe(pgid)
    await eventually(() => !isAlive(sleeper.pid), 'the sleep to end')
    // Once bash reaped it and took the terminal back, a SIGKILL for the group in front is refused.
    await eventually(async () => ((await client.ok('inspectForeground', { terminal })) as ForegroundFactsLike | null)?.isShellGroup, 'the shell back in front')
    const refused = await client.call('signalForeground', { terminal, signal: 'SIGKILL' })
    expect(refused).toMatchObject({ ok: false, error: { code: 'REFUSED_SHELL_KILL' } })
    await client.ok('terminate', { terminal })
    expect(isAlive(pid)).toBe(false)
    expect(seen.exit).toBeDefined()
    expect(await client.call('write', { terminal, data: '' })).toMatchObject({ ok: false, error: { code: 'UNKNOWN_TERMINAL' } })
  })

  it('a spawn is answered before its first output frame, and the exit comes after the last one', async () => {
    // Printing at once: what the PTY held when the session host subscribed goes out after the reply.
    const spawns = await Promise.all(Array.from({ length: 10 }, () => client.call('spawn', { ...bashSpawn(), argv: ['sh', '-c', 'printf early-bytes'] })))
    for (const reply of spawns) {
      expect(reply.ok).toBe(true)
      const { terminal } = (reply as { result: { terminal: number } }).result
      await eventually(() => client.terminals.get(terminal)?.exit, 'the exit')
      const mine = client.events.filter((event) => [`reply:${reply.id}`, `output:${terminal}`, `exit:${terminal}`].includes(event))
      expect(mine[0]).toBe(`reply:${reply.id}`)
      expect(mine.at(-1)).toBe(`exit:${terminal}`)
      expect(client.terminals.get(terminal)!.text()).toBe('early-bytes')
      await client.ok('terminate', { terminal })
    }
  })

  it('the environment is exactly the one sent: nothing of the session host own', async () => {
    const { terminal } = (await client.ok('spawn', { ...bashSpawn(), argv: ['env'], env: testEnv({ ONLY_THIS: 'yes' }) })) as { terminal: number }
    await eventually(() => client.terminals.get(terminal)?.exit, 'env to exit')
    const printed = client.terminals.get(terminal)!.text()
    expect(printed).toContain('ONLY_THIS=yes')
    expect(printed).not.toContain('LEAK_CHECK')
    await client.ok('terminate', { terminal })
  })

  it('two clients at once: each sees and reaches only its own terminals', async () => {
    const other = await socketClient(host.socketPath)
    const mine = await bash()
    const theirs = await bash(other)
    expect(theirs.terminal).toBe(1)
    expect(await other.call('write', { terminal: mine.terminal, data: 'ZWNobyBoaQ0=' })).toMatchObject({ ok: false, error: { code: 'UNKNOWN_TERMINAL' } })
    await write(other, theirs.terminal, 'echo theirs-only\r')
    await eventually(() => theirs.seen.text().includes('theirs-only'), 'their echo')
    expect(mine.seen.text()).not.toContain('theirs-only')
    other.close()
    // A client that hangs up takes its terminals with it.
    await eventually(() => !isAlive(theirs.pid), 'the other client’s bash to end')
    await client.ok('terminate', { terminal: mine.terminal })
  })

  it('unknown methods, malformed JSON and unknown message types are refused, and the connection keeps serving', async () => {
    expect(await client.call('nope' as never, {} as never)).toMatchObject({ ok: false, error: { code: 'UNKNOWN_METHOD' } })
    expect(await client.call('spawn', { argv: [], cwd: 'relative' } as never)).toMatchObject({ ok: false, error: { code: 'INVALID_SPEC' } })
    const raw = connect(host.socketPath)
    const received: string[] = []
    raw.on('data', (chunk: Buffer) => received.push(chunk.toString('utf8')))
    raw.write(encodeControl({ type: 'hello', version: 2, role: 'client', features: ['binary-output', 'credit'] }))
    const bad = Buffer.from('{oops')
    const head = Buffer.alloc(5)
    head.writeUInt32BE(bad.length + 1, 0)
    head[4] = 1
    raw.write(Buffer.concat([head, bad]))
    raw.write(encodeControl({ type: 'teleport' }))
    raw.write(encodeControl({ type: 'request', id: 1, method: 'inspectForeground', params: { terminal: 9 } }))
    await eventually(() => received.join('').includes('UNKNOWN_TERMINAL'), 'the replies')
    const text = received.join('')
    expect(text).toContain('MALFORMED_FRAME')
    expect(text).toContain('UNKNOWN_FRAME')
    raw.destroy()
  })

  it('an oversized frame gets FRAME_TOO_LARGE and a hang-up; a version 1 client gets PROTOCOL_VERSION naming both versions; other clients are unaffected', async () => {
    const { terminal, seen } = await bash()
    for (const attack of ['oversize', 'version'] as const) {
      const raw = connect(host.socketPath)
      let received = ''
      raw.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')))
      const ended = new Promise<void>((resolve) => raw.on('close', () => resolve()))
      if (attack === 'oversize') {
        raw.write(encodeControl({ type: 'hello', version: 2, role: 'client', features: ['binary-output', 'credit'] }))
        const head = Buffer.alloc(4)
        head.writeUInt32BE(64 * 1024 * 1024, 0)
        raw.write(head)
      } else raw.write(encodeControl({ type: 'hello', version: 1, role: 'client', features: ['binary-output', 'credit'] }))
      await ended
      if (attack === 'oversize') expect(received).toContain('FRAME_TOO_LARGE')
      else expect(received).toContain('this session host speaks protocol version 2, the client sent version 1')
    }
    await write(client, terminal, 'echo still-serving\r')
    await eventually(() => seen.text().includes('still-serving'), 'the echo after the attacks')
    await client.ok('terminate', { terminal })
  })
})

describe('cancel', () => {
  it('a cancel right behind a spawn aborts it: SPAWN_ABORTED and no process left', async () => {
    const bashes = () => descendants(host.pid).filter((child) => processName(child.pid) === 'bash').length
    const before = bashes()
    const raw = connect(host.socketPath)
    const frames: Frame[] = []
    const decoder = new FrameDecoder(
      (frame) => frames.push(frame),
      () => {},
    )
    raw.on('data', (chunk: Buffer) => decoder.push(chunk))
    // In one write, so the session host reads the cancel before the spawn could finish.
    raw.write(
      Buffer.concat([
        encodeControl({ type: 'hello', version: 2, role: 'client', features: ['binary-output', 'credit'] }),
        encodeControl({ type: 'request', id: 1, method: 'spawn', params: bashSpawn() }),
        encodeControl({ type: 'cancel', id: 1 }),
      ]),
    )
    const reply = await eventually(() => frames.find((frame) => frame.kind === 'control' && frame.message.type === 'reply'), 'the spawn reply')
    expect(reply).toMatchObject({ message: { ok: false, error: { code: 'SPAWN_ABORTED' } } })
    expect(bashes()).toBe(before)
    raw.destroy()
  })
})
