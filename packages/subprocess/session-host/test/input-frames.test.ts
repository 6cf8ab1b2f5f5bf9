import { eventually } from 'dsh-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AdoptResult, INPUT_FRAMES_FEATURE, INPUT_OFFSETS_FEATURE } from '../src/index'
import { type HostProcess, startHostProcess } from './support/host-process'
import { bashSpawn, socketClient, type WireClient } from './support/wire-client'

// Input frames (feature `input-frames`) against a real session host bin: a write with no reply,
// in order with the requests around it, and a failure told in an error frame naming the terminal.
let host: HostProcess
let client: WireClient

beforeAll(async () => {
  host = await startHostProcess()
  client = await socketClient(host.socketPath)
})
afterAll(async () => {
  client?.close()
  await host?.stop()
})

describe('input frames', () => {
  it('the session host offers them; an input frame reaches the PTY and no reply comes for it', async () => {
    expect((await client.hello).features).toContain(INPUT_FRAMES_FEATURE)
    const { terminal } = (await client.ok('spawn', bashSpawn())) as { terminal: number }
    const seen = client.terminals.get(terminal) ?? (await eventually(() => client.terminals.get(terminal), 'the first output'))
    await eventually(() => seen.text().includes('$ '), 'the first prompt')
    const replies = client.replies.length
    client.channel.sendInput(terminal, Buffer.from('echo framed-$((6*7))\r'))
    await eventually(() => seen.text().includes('framed-42'), 'the echo of the input frame')
    expect(client.replies.length).toBe(replies)
    expect(client.errors).toEqual([])
    await client.ok('terminate', { terminal })
  })

  it('input frames and write requests between them reach the PTY in the order they were sent', async () => {
    const { terminal } = (await client.ok('spawn', bashSpawn())) as { terminal: number }
    const seen = await eventually(() => client.terminals.get(terminal), 'the first output')
    await eventually(() => seen.text().includes('$ '), 'the first prompt')
    // Three pieces of one command line, sent back to back without waiting: a reordering shows in the echo.
    client.channel.sendInput(terminal, Buffer.from('echo ordered-'))
    const request = client.ok('write', { terminal, data: Buffer.from('one-').toString('base64') })
    client.channel.sendInput(terminal, Buffer.from('two\r'))
    await request
    await eventually(() => /\nordered-one-two\r?\n/.test(seen.text()), 'the command line in order')
    await client.ok('terminate', { terminal })
  })

  it('input offsets: an adoption answers how many input bytes the terminal took, from frames and write requests of every connection', async () => {
    expect((await client.hello).features).toContain(INPUT_OFFSETS_FEATURE)
    const first = await socketClient(host.socketPath)
    const { terminal } = (await first.ok('spawn', bashSpawn({ durable: { key: 'offsets-1', ttlMs: 60_000, retainBytes: 65_536 } }))) as { terminal: number }
    const typed = ['echo a-', 'one\r', 'echo b\r']
    first.channel.sendInput(terminal, Buffer.from(typed[0]!))
    await first.ok('write', { terminal, data: Buffer.from(typed[1]!).toString('base64') })
    first.channel.sendInput(terminal, Buffer.from(typed[2]!))
    const seen = await eventually(() => first.terminals.get(terminal), 'the first output')
    await eventually(() => seen.text().includes('\nb\r\n') || seen.text().includes('\nb\n'), 'the last echo')
    first.close()
    await first.closed
    const second = await socketClient(host.socketPath)
    const sent = typed.join('').length
    const adopted = (await eventually(async () => {
      const reply = await second.call('adopt', { key: 'offsets-1' })
      return reply.ok ? (reply.result as AdoptResult) : undefined
    }, 'the adoption once the first connection is gone')) as AdoptResult
    expect(adopted.inputOffset).toBe(sent)
    await second.ok('terminate', { terminal: adopted.terminal })
    second.close()
  })

  it('input for a terminal this connection does not hold is refused with UNKNOWN_TERMINAL; the connection goes on', async () => {
    const errors = client.errors.length
    client.channel.sendInput(999, Buffer.from('x'))
    await eventually(() => client.errors.length > errors, 'the error frame')
    expect(client.errors.at(-1)).toMatchObject({ code: 'UNKNOWN_TERMINAL' })
    expect(await client.ok('list', {})).toMatchObject({ terminals: [] })
  })

  it('input a terminal can no longer take is told in an error frame naming the terminal and the write’s code', async () => {
    const { terminal } = (await client.ok('spawn', { ...bashSpawn(), argv: ['true'] })) as { terminal: number }
    await eventually(() => client.terminals.get(terminal)?.exit, 'the exit')
    const others = client.others.length
    client.channel.sendInput(terminal, Buffer.from('late\r'))
    const failure = await eventually(() => client.others.slice(others).find((message) => message.type === 'error'), 'the error frame')
    expect(failure).toMatchObject({ type: 'error', terminal, code: 'TERMINAL_EXITED' })
    await client.ok('terminate', { terminal }).catch(() => {})
  })
})
