import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import type { Context } from '@deepseek-ai/cordis'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { closeHosts, discoverHosts } from '../src/attach/discover'
import { describeError, HostClient } from '../src/attach/host-client'
import { type AttachStreams, runAttachedSession } from '../src/attach/terminal-session'
import { HumanGateway } from '../src/human/gateway'
import { type ClientMessage, encodeLine, LineSplitter, type ServerMessage, toBase64 } from '../src/human/protocol'
import { hostFiles } from '../src/human/runtime-dir'

const TOKEN = 'f'.repeat(64)

/** A host on a real socket of this process's pid whose answers the test writes. */
interface FakeHost {
  readonly dir: string
  readonly server: Server
  /** Every connection the host accepted, as it is now. */
  readonly sockets: Socket[]
}

let dir: string
let fake: FakeHost | undefined

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'dsh-attach-client-'))
  chmodSync(dir, 0o700)
})

afterEach(async () => {
  if (fake) {
    for (const socket of fake.sockets) socket.destroy()
    await new Promise((resolve) => fake!.server.close(resolve))
    fake = undefined
  }
  rmSync(dir, { recursive: true, force: true })
})

/** Listen as host `process.pid` in `dir`; `answer` replies to every message after a good hello. */
async function startFakeHost(answer: (message: ClientMessage, socket: Socket) => void): Promise<FakeHost> {
  const files = hostFiles(dir, process.pid)
  writeFileSync(files.tokenPath, `${TOKEN}\n`, { mode: 0o600 })
  const sockets: Socket[] = []
  const server = createServer((socket) => {
    sockets.push(socket)
    const splitter = new LineSplitter()
    socket.on('error', () => {})
    socket.on('data', (chunk: Buffer) => {
      for (const line of splitter.push(chunk)) {
        const message = JSON.parse(line) as ClientMessage
        if (message.type === 'hello') socket.write(encodeLine({ type: 'ok' } as ServerMessage))
        else answer(message, socket)
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(files.socketPath, resolve))
  fake = { dir, server, sockets }
  return fake
}

const listing: ServerMessage = {
  type: 'sessions',
  host: { pid: process.pid, cwd: '/' },
  sessions: [{ sessionId: 'pty-1', ownerId: 'agent-1', type: 'shell', status: 'running' } as never],
}

/** Pipes standing in for the person's terminal (no TTY: no raw mode, no alternate screen). */
function pipes(): AttachStreams & { said(): string } {
  const stderr = new PassThrough()
  let said = ''
  stderr.on('data', (chunk: Buffer) => {
    said += chunk.toString('utf8')
  })
  const stdout = new PassThrough()
  stdout.resume()
  return {
    stdin: new PassThrough() as unknown as NodeJS.ReadStream,
    stdout: stdout as unknown as NodeJS.WriteStream,
    stderr: stderr as unknown as NodeJS.WriteStream,
    said: () => said,
  }
}

describe('the attach client', () => {
  it('rejects a request at once with HOST_GONE once the host hung up, or the client did', async () => {
    await startFakeHost((message, socket) => {
      if (message.type === 'list') socket.end()
    })
    const client = await HostClient.open(hostFiles(dir, process.pid))
    await expect(client.request({ type: 'list' })).rejects.toMatchObject({ code: 'HOST_GONE' })
    await client.closed
    await expect(client.request({ type: 'list' })).rejects.toMatchObject({ code: 'HOST_GONE' })

    const other = await HostClient.open(hostFiles(dir, process.pid))
    other.close()
    await expect(other.request({ type: 'list' })).rejects.toMatchObject({ code: 'HOST_GONE' })
  })

  it('ends attach with HOST_GONE, not a hang, when the host goes away between list and attach', async () => {
    await startFakeHost((message, socket) => {
      if (message.type === 'list') {
        socket.write(encodeLine(listing))
        socket.end()
      }
    })
    const discovery = await discoverHosts(dir)
    expect(discovery.skipped).toEqual([])
    const found = discovery.hosts[0]!
    expect(found.sessions.map((session) => session.sessionId)).toEqual(['pty-1'])
    await found.client.closed
    await expect(runAttachedSession(found.client, 'pty-1', false, pipes())).rejects.toMatchObject({ code: 'HOST_GONE' })
    closeHosts(discovery)
  })

  it('finishes on a signal even when the host never answers the detach', async () => {
    const seen: string[] = []
    let hungUp = false
    await startFakeHost((message, socket) => {
      seen.push(message.type)
      socket.on('close', () => {
        hungUp = true
      })
      if (message.type === 'attach') {
        socket.write(encodeLine({ type: 'screen', sessionId: 'pty-1', data: toBase64('$ '), writer: true }))
      }
      // `detach` is never answered: the host hangs.
    })
    const client = await HostClient.open(hostFiles(dir, process.pid))
    const streams = pipes()
    const before = new Set(process.listeners('SIGHUP'))
    const attached = runAttachedSession(client, 'pty-1', false, streams)
    await expect.poll(() => process.listeners('SIGHUP').length).toBe(before.size + 1)
    const onSignal = process.listeners('SIGHUP').find((listener) => !before.has(listener))!
    ;(onSignal as (signal: NodeJS.Signals) => void)('SIGHUP')
    expect(await attached).toBe(0)
    expect(streams.said()).toContain('[detached from pty-1 on SIGHUP; it keeps running]')
    expect(process.listeners('SIGHUP')).toHaveLength(before.size)
    await client.closed
    await expect.poll(() => hungUp).toBe(true)
    expect(seen).toEqual(['attach'])
  })

  it('says an error as its message and its code', () => {
    expect(describeError(Object.assign(new Error('gone'), { code: 'HOST_GONE' }))).toBe('gone (HOST_GONE)')
    expect(describeError(new Error('plain'))).toBe('plain')
    expect(describeError('text')).toBe('text')
    expect(describeError(undefined)).toBe('undefined')
  })
})

describe('the human gateway', () => {
  it('lists every session even when inspecting one never answers, without waiting on them in turn', async () => {
    const agent = { id: 'agent-1' }
    const snapshots = [1, 2, 3].map((n) => ({ sessionId: `pty-${n}`, type: 'shell', status: 'running' }))
    let asked = 0
    const terminals = {
      list: () => snapshots,
      inputState: (_agent: unknown, sessionId: string) => {
        asked++
        if (sessionId === 'pty-2') return Promise.resolve({ kind: 'prompt' })
        return new Promise(() => {}) // hangs
      },
    }
    const root = { get: (name: string) => (name === 'agents' ? { list: () => [agent] } : name === 'terminals' ? terminals : undefined) }
    const gateway = new HumanGateway(root as unknown as Context)
    vi.useFakeTimers()
    let sessions: Awaited<ReturnType<HumanGateway['sessions']>> | undefined
    try {
      void gateway.sessions().then((listed) => (sessions = listed))
      // Two hung inspections share one bound (2 s) instead of adding up: one bound's time lists them all.
      await vi.advanceTimersByTimeAsync(2_000)
    } finally {
      vi.useRealTimers()
    }
    expect(asked).toBe(3)
    expect(sessions?.map((session) => [session.sessionId, session.ownerId, session.input])).toEqual([
      ['pty-1', 'agent-1', undefined],
      ['pty-2', 'agent-1', { kind: 'prompt' }],
      ['pty-3', 'agent-1', undefined],
    ])
    expect(sessions?.[0]).not.toHaveProperty('input')
  })
})
