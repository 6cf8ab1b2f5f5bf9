import { PassThrough } from 'node:stream'
import { encodeControl, encodeOutput, type Frame, FrameDecoder, INPUT_FRAMES_FEATURE } from 'dsh-session-host'
import { isSubprocessError } from 'dsh-subprocess'
import { describe, expect, it } from 'vitest'
import { SessionHostClient } from '../src/client'

/** A client whose session host is played by hand (its hello names `features`): `sent` holds what the client wrote, decoded. */
function harness(features: readonly string[] = ['binary-output', 'credit'], inputFrames = false) {
  const toClient = new PassThrough()
  const fromClient = new PassThrough()
  const sent: Frame[] = []
  const decoder = new FrameDecoder(
    (frame) => sent.push(frame),
    () => {},
  )
  fromClient.on('data', (chunk: Buffer) => decoder.push(chunk))
  const reports: string[] = []
  const client = new SessionHostClient(toClient, fromClient, (message) => reports.push(message), undefined, { livenessMs: 5_000, inputFrames })
  toClient.write(encodeControl({ type: 'hello', version: 2, role: 'session-host', features, pid: 1, windowBytes: 1024 } as never))
  const controls = () => sent.flatMap((frame) => (frame.kind === 'control' ? [frame.message] : []))
  const flush = () => new Promise((resolve) => setImmediate(resolve))
  return { toClient, client, controls, reports, flush, sent }
}

describe('SessionHostClient', () => {
  it('a reply to a request that is not pending is UNEXPECTED_FRAME, and never answers another call', async () => {
    const { toClient, client, controls, flush } = harness()
    await client.ready
    let settled = false
    const pending = client.request('write', { terminal: 1, data: '' }).finally(() => (settled = true))
    toClient.write(encodeControl({ type: 'reply', id: 99, ok: true, result: null } as never))
    await flush()
    expect(settled).toBe(false)
    expect(controls().find((message) => message.type === 'error')).toMatchObject({ code: 'UNEXPECTED_FRAME' })
    toClient.write(encodeControl({ type: 'reply', id: 1, ok: false, error: { code: 'TERMINAL_EXITED', message: 'gone' } } as never))
    expect(isSubprocessError(await pending.catch((error: unknown) => error), 'TERMINAL_EXITED')).toBe(true)
  })

  it('a lost connection rejects every pending call with SESSION_HOST_LOST and tells the terminals', async () => {
    const { toClient, client } = harness()
    await client.ready
    const lost: string[] = []
    client.attach(1, { output: () => true, exited: () => {}, lost: (error) => lost.push((error as { code?: string }).code ?? '') })
    const calls = [client.request('terminate', { terminal: 1 }), client.request('inspectForeground', { terminal: 1 })]
    toClient.end()
    for (const call of calls) expect(isSubprocessError(await call.catch((error: unknown) => error), 'SESSION_HOST_LOST')).toBe(true)
    expect(lost).toEqual(['SESSION_HOST_LOST'])
    expect(isSubprocessError(await client.request('write', { terminal: 1, data: '' }).catch((error: unknown) => error), 'SESSION_HOST_LOST')).toBe(true)
  })

  it('output that does not continue its stream closes the connection (nothing is silently skipped)', async () => {
    const { toClient, client, reports } = harness()
    await client.ready
    const chunks: string[] = []
    let received = 0
    client.attach(1, {
      output: (offset, bytes) => {
        if (offset !== received) return false
        received += bytes.length
        chunks.push(bytes.toString())
        return true
      },
      exited: () => {},
      lost: () => {},
    })
    for (const frame of encodeOutput(1, 0, Buffer.from('abc'))) toClient.write(frame)
    for (const frame of encodeOutput(1, 10, Buffer.from('gap'))) toClient.write(frame)
    await client.closed
    expect(chunks).toEqual(['abc'])
    expect(reports.some((line) => line.includes('does not continue'))).toBe(true)
  })

  it('a session host that refuses the version makes `ready` reject with the reason', async () => {
    const toClient = new PassThrough()
    const client = new SessionHostClient(toClient, new PassThrough(), () => {})
    toClient.write(
      encodeControl({ type: 'error', code: 'PROTOCOL_VERSION', message: 'this session host speaks protocol version 2, the client sent version 1' } as never),
    )
    const error = (await client.ready.catch((caught: unknown) => caught)) as Error
    expect(isSubprocessError(error, 'SESSION_HOST_LOST')).toBe(true)
    expect(error.message).toContain('PROTOCOL_VERSION: this session host speaks protocol version 2, the client sent version 1')
  })
})

describe('SessionHostClient: input frames', () => {
  it('without the session host’s `input-frames` feature, sendInput declines (the write goes as a request)', async () => {
    const { client } = harness()
    await client.ready
    expect(client.sendInput(1, Buffer.from('x'))).toBe(false)
  })

  it('over a link that can be cut and come back (inputFrames off), sendInput declines even when offered', async () => {
    const { client } = harness(['binary-output', 'credit', INPUT_FRAMES_FEATURE], false)
    await client.ready
    expect(client.sendInput(1, Buffer.from('x'))).toBe(false)
  })

  it('with it, sendInput writes one input frame and nothing waits for a reply', async () => {
    const { client, sent } = harness(['binary-output', 'credit', INPUT_FRAMES_FEATURE], true)
    await client.ready
    expect(client.sendInput(4, Buffer.from('echo hi\r'))).toBe(true)
    await new Promise((resolve) => setImmediate(resolve))
    const input = sent.find((frame) => frame.kind === 'input')
    expect(input).toMatchObject({ kind: 'input', terminal: 4 })
    expect(input?.kind === 'input' && input.bytes.toString()).toBe('echo hi\r')
  })
})
