import { type ChildProcess, spawn } from 'node:child_process'
import { readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { join } from 'node:path'
import { eventually, isAlive, processesWithArgs } from 'dsh-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ListResult, sessionHostCommand } from '../src/index'
import { type HostProcess, START_TIMEOUT_MS, startHostProcess } from './support/host-process'
import { bashSpawn, type WireClient, wireClient } from './support/wire-client'

// The stdio handoff: a `--stdio` relay whose stdin and stdout are pipes (what sshd gives a command)
// offers them to the socket session host, which then reads and writes the link's pipes itself.
// Node gives a child socket pairs, not pipes, so the relay runs behind `cat | relay | cat`: its own
// stdin and stdout are real pipes, as under sshd, and the cats stand for sshd's ends.
let host: HostProcess
const children: ChildProcess[] = []

beforeAll(async () => {
  host = await startHostProcess(['--idle-exit-ms', '0'])
}, START_TIMEOUT_MS + 5_000)

afterAll(async () => {
  // Each child leads a process group of its own: the pipelines' members go with it.
  for (const child of children) killGroup(child)
  for (const pid of processesWithArgs('--stdio', '--socket', host.socketPath)) process.kill(pid, 'SIGKILL')
  await host.stop()
})

function killGroup(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, 'SIGKILL')
  } catch {
    // Already gone.
  }
}

/** The pipe inodes a process holds (`pipe:[N]` targets of its descriptors). */
function pipesOf(pid: number): Set<string> {
  const held = new Set<string>()
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`)
      if (target.startsWith('pipe:')) held.add(target)
    } catch {
      // Closed meanwhile.
    }
  }
  return held
}

/** Bytes a process read and wrote so far (`/proc/<pid>/io`). */
function ioOf(pid: number): { read: number; written: number } {
  const io = readFileSync(`/proc/${pid}/io`, 'utf8')
  const field = (name: string) => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(io)?.[1])
  return { read: field('rchar'), written: field('wchar') }
}

/** A relay behind `cat | … | cat`, its client, and its pid once its handoff was answered. */
async function pipedRelay(): Promise<{ shell: ChildProcess; client: WireClient; relayPid: number }> {
  const before = new Set(processesWithArgs('--stdio', '--socket', host.socketPath))
  const shell = spawn('sh', ['-c', 'cat | "$@" | cat', 'sh', ...sessionHostCommand(), '--stdio', '--socket', host.socketPath], {
    stdio: ['pipe', 'pipe', 'inherit'],
    detached: true,
  })
  children.push(shell)
  const client = wireClient(shell.stdout!, shell.stdin!)
  await client.hello
  const [relayPid] = processesWithArgs('--stdio', '--socket', host.socketPath).filter((pid) => !before.has(pid) && pid !== shell.pid)
  if (relayPid === undefined) throw new Error('no relay process found')
  return { shell, client, relayPid }
}

/** Send `line` as a connection's first bytes and read the answer line (undefined when it closed without one). */
function offer(line: string | Buffer): Promise<{ answer: string | undefined; socket: Socket }> {
  return new Promise((resolve) => {
    const socket = connect(host.socketPath)
    let received = Buffer.alloc(0)
    socket.on('error', () => {})
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk])
      const newline = received.indexOf(0x0a)
      if (newline === -1) return
      // What follows the answer (a declined offer's frames) is left for the next reader.
      socket.off('data', onData)
      socket.pause()
      socket.unshift(received.subarray(newline + 1))
      resolve({ answer: received.subarray(0, newline).toString(), socket })
    }
    socket.on('data', onData)
    socket.on('close', () => resolve({ answer: undefined, socket }))
    socket.write(line)
  })
}

describe('the stdio handoff', () => {
  it('through pipes the session host holds the relay’s own stdin and stdout, and the relay copies nothing', async () => {
    const { client, relayPid } = await pipedRelay()
    const { pid: sessionHostPid } = await client.hello
    expect(sessionHostPid).toBe(host.pid)
    const relayStdio = [readlinkSync(`/proc/${relayPid}/fd/0`), readlinkSync(`/proc/${relayPid}/fd/1`)]
    expect(relayStdio.every((target) => target.startsWith('pipe:'))).toBe(true)
    const held = pipesOf(host.pid)
    for (const target of relayStdio) expect(held.has(target)).toBe(true)

    const before = ioOf(relayPid)
    const shell = (await client.ok('spawn', bashSpawn())) as { terminal: number; pid: number }
    // 256 KiB out and a few hundred bytes in cross the link; none of it passes through the relay.
    await client.ok('write', {
      terminal: shell.terminal,
      data: Buffer.from('head -c 262144 /dev/zero | tr "\\0" x; echo; echo done-$((6*7))\r').toString('base64'),
    })
    await eventually(() => client.terminals.get(shell.terminal)?.text().includes('done-42'), 'the output through the taken pipes')
    expect(client.terminals.get(shell.terminal)!.bytes).toBeGreaterThan(262_144)
    const after = ioOf(relayPid)
    expect(after.read - before.read).toBeLessThan(32_768)
    expect(after.written - before.written).toBeLessThan(32_768)
    expect(client.errors).toEqual([])
    await client.ok('terminate', { terminal: shell.terminal })
  }, 30_000)

  it('the end of the link (its stdin closed) ends the connection and the relay; a durable terminal is detached, the others end', async () => {
    const first = await pipedRelay()
    const durable = (await first.client.ok('spawn', bashSpawn({ durable: { key: 'handoff-1', ttlMs: 60_000, retainBytes: 65_536 } }))) as { pid: number }
    const plain = (await first.client.ok('spawn', bashSpawn())) as { pid: number }
    first.shell.stdin!.end()
    await first.client.closed
    await eventually(() => !isAlive(first.relayPid), 'the relay to exit with its link')
    await eventually(() => !isAlive(plain.pid), 'the non-durable terminal to end')
    expect(isAlive(durable.pid)).toBe(true)
    // The session host let go of the link's pipes: none of the relay's are left in it.
    const second = await pipedRelay()
    expect(((await second.client.ok('list', {})) as ListResult).terminals).toMatchObject([{ key: 'handoff-1', pid: durable.pid }])
    // The relay's death (a killed sshd child) ends its connection too, and detaches again.
    await second.client.ok('adopt', { key: 'handoff-1' })
    const taken = [readlinkSync(`/proc/${second.relayPid}/fd/0`), readlinkSync(`/proc/${second.relayPid}/fd/1`)]
    expect(taken.every((target) => pipesOf(host.pid).has(target))).toBe(true)
    process.kill(second.relayPid, 'SIGKILL')
    await eventually(() => taken.every((target) => !pipesOf(host.pid).has(target)), 'the session host to let the dead relay’s pipes go')
    second.shell.stdin!.end()
    const third = await pipedRelay()
    expect(((await third.client.ok('list', {})) as ListResult).terminals).toMatchObject([{ key: 'handoff-1', pid: durable.pid }])
    const adopted = (await third.client.ok('adopt', { key: 'handoff-1' })) as { terminal: number }
    await third.client.ok('terminate', { terminal: adopted.terminal })
    expect(isAlive(durable.pid)).toBe(false)
    third.shell.stdin!.end()
    await third.client.closed
  }, 40_000)
})

describe('the stdio handoff, attacked', () => {
  it('an offer naming another uid’s process is declined with the reason; the connection carries frames, and nothing of that process is opened', async () => {
    // `setpriv` makes the middle process nobody's, its stdin and stdout pipes of the shell.
    const victim = spawn('sh', ['-c', 'sleep 60 | setpriv --reuid=65534 --regid=65534 --clear-groups sleep 61.25 | sleep 60'], {
      stdio: 'ignore',
      detached: true,
    })
    children.push(victim)
    const pid = await eventually(() => processesWithArgs('sleep', '61.25')[0], 'the other uid’s process')
    const { answer, socket } = await offer(`DSH-STDIO-HANDOFF 1 ${pid}\n`)
    expect(answer).toBe(`relay process ${pid} runs as uid 65534, not ${process.getuid!()}`)
    for (const target of [readlinkSync(`/proc/${pid}/fd/0`), readlinkSync(`/proc/${pid}/fd/1`)]) expect(pipesOf(host.pid).has(target)).toBe(false)
    // Declined, the socket is an ordinary client connection: the session host's hello follows.
    const client = wireClient(socket, socket)
    socket.resume()
    expect(await client.hello).toMatchObject({ role: 'session-host' })
    client.close()
    killGroup(victim)
  }, 20_000)

  it('an offer whose process has no pipes (a terminal, /dev/null, a socket) or does not exist is declined', async () => {
    const quiet = spawn('sleep', ['60'], { stdio: 'ignore' })
    children.push(quiet)
    expect((await offer(`DSH-STDIO-HANDOFF 1 ${quiet.pid}\n`)).answer).toBe(`relay /proc/${quiet.pid}/fd/0 is not a pipe`)
    const sockets = spawn('sleep', ['60'], { stdio: ['pipe', 'pipe', 'ignore'] })
    children.push(sockets)
    expect((await offer(`DSH-STDIO-HANDOFF 1 ${sockets.pid}\n`)).answer).toMatch(new RegExp(`^relay cannot open /proc/${sockets.pid}/fd/0: ENXIO`))
    expect((await offer('DSH-STDIO-HANDOFF 1 1073741000\n')).answer).toMatch(/^relay process 1073741000: .*ENOENT/)
    quiet.kill('SIGKILL')
    sockets.kill('SIGKILL')
  }, 20_000)

  it('malformed offers are refused and closed; the session host goes on serving', async () => {
    expect((await offer('DSH-STDIO-HANDOFF 9 123\n')).answer).toBe('relay handoff version 9 is not 1')
    expect((await offer('DSH-STDIO-HANDOFF 1 -5\n')).answer).toMatch(/^relay not a handoff offer/)
    expect((await offer('Dgarbage\n')).answer).toMatch(/^relay not a handoff offer/)
    // No newline within the bound: closed without an answer.
    expect((await offer(`D${'x'.repeat(300)}`)).answer).toBeUndefined()
    const { client } = await pipedRelay()
    const shell = (await client.ok('spawn', bashSpawn())) as { terminal: number }
    await client.ok('terminate', { terminal: shell.terminal })
    expect(isAlive(host.pid)).toBe(true)
  }, 20_000)
})

describe('a relay meeting a session host from before the handoff', () => {
  it('sees frames instead of an answer, connects again and copies bytes', async () => {
    const { createServer } = await import('node:net')
    const { ensureSocketDir } = await import('../src/internal')
    const { relayToSocket } = await import('../src/relay')
    const { PassThrough } = await import('node:stream')
    const socketPath = join(host.socketPath, '..', '..', `old-${process.pid}`, 'session-host.sock')
    ensureSocketDir(socketPath)
    const received: string[] = []
    let connections = 0
    // An old session host: its hello (a frame, first byte 0) goes out at once; it reads what comes.
    const server = createServer((socket) => {
      connections += 1
      const index = connections
      received[index] = ''
      socket.on('data', (chunk: Buffer) => (received[index] += chunk.toString('latin1')))
      socket.write(Buffer.from([0, 0, 0, 2, 1, 0x7b]))
      if (index === 2) socket.on('data', () => socket.end())
    })
    await new Promise<void>((resolve) => server.listen(socketPath, resolve))
    try {
      const input = new PassThrough()
      const output = new PassThrough()
      let written = Buffer.alloc(0)
      output.on('data', (chunk: Buffer) => (written = Buffer.concat([written, chunk])))
      const relayed = relayToSocket({ socketPath, command: ['false'], idleExitMs: 0, startTimeoutMs: 5_000 }, { input: () => input, output: () => output })
      await eventually(() => connections === 2, 'the second connection')
      input.write('client-bytes')
      await relayed
      expect(received[1]).toMatch(/^DSH-STDIO-HANDOFF 1 \d+\n$/)
      expect(received[2]).toBe('client-bytes')
      expect([...written]).toEqual([0, 0, 0, 2, 1, 0x7b])
    } finally {
      server.close()
      rmSync(join(socketPath, '..'), { recursive: true, force: true })
    }
  }, 20_000)
})
