import { Buffer } from 'node:buffer'
import { Context } from '@deepseek-ai/cordis'
import * as agentPlugin from 'dsh-agent'
import * as terminalPlugin from 'dsh-terminal'
import { Config, DEFAULT_MAX_SESSIONS_PER_AGENT, DEFAULT_MAX_TEXT_BYTES, MAX_SESSION_NAME_CODE_POINTS } from 'dsh-terminal'
import { describe, expect, it } from 'vitest'
import { flush, outcome, setup, StubBackend, summary, type TerminalConfigInput, thrown } from './helpers'

async function failure(promise: Promise<unknown>) {
  const result = await outcome(promise)
  return result.ok ? 'resolved' : summary(result.error)
}

async function withBackend(config?: TerminalConfigInput, auto = true) {
  const h = await setup(config)
  const backend = new StubBackend('shell', auto)
  h.terminals.registerBackend(backend)
  const alice = await h.agent('alice')
  return { h, backend, alice }
}

describe('config', () => {
  it('defaults to 16 sessions per agent and 64 KiB of text per send', () => {
    expect(Config.parse(undefined)).toEqual({ detachedTtlMs: 0, maxSessionsPerAgent: 16, maxTextBytes: 65_536, humanActiveMs: 5_000 })
    expect([DEFAULT_MAX_SESSIONS_PER_AGENT, DEFAULT_MAX_TEXT_BYTES]).toEqual([16, 65_536])
  })

  it('refuses a bound that is not a positive integer, so the plugin fails to load', async () => {
    for (const bad of [{ maxSessionsPerAgent: 0 }, { maxSessionsPerAgent: 2.5 }, { maxTextBytes: 0 }, { maxTextBytes: '64k' }]) {
      expect(Config.safeParse(bad).success).toBe(false)
      const root = new Context()
      await root.plugin(agentPlugin)
      const mounted = await outcome(Promise.resolve(root.plugin(terminalPlugin, bad as TerminalConfigInput)))
      expect(mounted.ok).toBe(false)
      expect(root.get('terminals')).toBeUndefined()
    }
  })
})

describe('sessions per agent', () => {
  it('accepts exactly the limit and refuses the next open with SESSION_LIMIT', async () => {
    const { h, backend, alice } = await withBackend({ maxSessionsPerAgent: 2 })
    await h.terminals.spawn(alice, { type: 'shell' })
    await h.terminals.spawn(alice, { type: 'shell' })
    expect(await failure(h.terminals.spawn(alice, { type: 'shell', name: 'third' }))).toEqual({
      name: 'TerminalError',
      code: 'SESSION_LIMIT',
      message:
        'PTY session limit reached: agent alice already holds 2 sessions, the most one agent may hold ' +
        '(open, starting and closing ones count). Close a session you no longer need with terminal_close ' +
        '(terminal_list shows them), then open again',
    })
    // refused before the backend was asked and before an id was minted
    expect(backend.calls).toHaveLength(2)
    // the bound is per agent
    const bob = await h.agent('bob')
    expect((await h.terminals.spawn(bob, { type: 'shell' })).sessionId).toBe('pty-3')
  })

  it('the default allows 16 sessions and refuses the 17th', async () => {
    const { h, alice } = await withBackend()
    for (let index = 0; index < 16; index++) await h.terminals.spawn(alice, { type: 'shell' })
    expect(await failure(h.terminals.spawn(alice, { type: 'shell' }))).toMatchObject({ code: 'SESSION_LIMIT' })
    expect(h.terminals.list(alice)).toHaveLength(16)
  })

  it('spawns in flight count: concurrent opens cannot overshoot, and a failed spawn frees its slot', async () => {
    const { h, backend, alice } = await withBackend({ maxSessionsPerAgent: 2 }, false)
    const first = h.terminals.spawn(alice, { type: 'shell' })
    const second = failure(h.terminals.spawn(alice, { type: 'shell' }))
    // Observed at once: the refusal may land while the flush below is still awaited.
    const third = failure(h.terminals.spawn(alice, { type: 'shell' }))
    await flush()
    expect(backend.calls).toHaveLength(2)
    expect(await third).toMatchObject({ code: 'SESSION_LIMIT' })
    backend.calls[0]!.result.resolve(backend.calls[0]!.session())
    backend.calls[1]!.result.reject(new Error('no pty left'))
    expect((await first).sessionId).toBe('pty-1')
    expect(await second).toEqual({ name: 'Error', message: 'no pty left' })
    const again = h.terminals.spawn(alice, { type: 'shell' })
    await flush()
    backend.calls[2]!.result.resolve(backend.calls[2]!.session())
    expect((await again).sessionId).toBe('pty-3')
    expect(await failure(h.terminals.spawn(alice, { type: 'shell' }))).toMatchObject({ code: 'SESSION_LIMIT' })
  })

  it('a closing session holds its slot until its close succeeded; a failed close keeps it', async () => {
    const { h, backend, alice } = await withBackend({ maxSessionsPerAgent: 1 })
    const { sessionId } = await h.terminals.spawn(alice, { type: 'shell' })
    const session = backend.sessions[0]!
    session.closeGate = []
    const closing = h.terminals.close(alice, sessionId)
    await flush()
    expect(await failure(h.terminals.spawn(alice, { type: 'shell' }))).toMatchObject({ code: 'SESSION_LIMIT' })
    session.closeGate[0]!.reject(new Error('survivors: 4242'))
    expect(await failure(closing)).toEqual({ name: 'Error', message: 'survivors: 4242' })
    expect(await failure(h.terminals.spawn(alice, { type: 'shell' }))).toMatchObject({ code: 'SESSION_LIMIT' })
    session.closeGate = undefined
    expect(await h.terminals.close(alice, sessionId)).toBe(true)
    // kill resolved: the slot is free at once
    expect((await h.terminals.spawn(alice, { type: 'shell' })).sessionId).toBe('pty-2')
  })

  it('an exited session still counts until it is closed', async () => {
    const { h, backend, alice } = await withBackend({ maxSessionsPerAgent: 1 })
    const { sessionId } = await h.terminals.spawn(alice, { type: 'shell' })
    backend.sessions[0]!.state = { kind: 'exited', exitCode: 0, signal: null }
    expect(await failure(h.terminals.spawn(alice, { type: 'shell' }))).toMatchObject({ code: 'SESSION_LIMIT' })
    await h.terminals.close(alice, sessionId)
    expect((await h.terminals.spawn(alice, { type: 'shell' })).status).toEqual({ kind: 'running' })
  })
})

describe('text per send', () => {
  it('accepts exactly maxTextBytes UTF-8 bytes and refuses one more with TEXT_TOO_LARGE, writing nothing', async () => {
    const { h, backend, alice } = await withBackend({ maxTextBytes: 8 })
    const { sessionId } = await h.terminals.spawn(alice, { type: 'shell' })
    const session = backend.sessions[0]!
    // three code points but nine bytes: the bound is on UTF-8 bytes
    expect(thrown(() => h.terminals.startSend(alice, sessionId, { text: '日本語', submit: true }))).toEqual({
      name: 'TerminalError',
      code: 'TEXT_TOO_LARGE',
      message:
        'PTY send text is 9 UTF-8 bytes, over the limit of 8 bytes per send; nothing was sent. ' +
        'Write large content to a file in pieces (several sends, each appending one part under the limit, e.g. a heredoc ' +
        'appended with >> file), then use the file',
    })
    expect(thrown(() => h.terminals.startSend(alice, sessionId, { text: 'abcdefghi', submit: false }))).toMatchObject({ code: 'TEXT_TOO_LARGE' })
    expect(session.sends).toEqual([])
    // a refusal takes no reservation; the boundary is accepted
    const send = h.terminals.startSend(alice, sessionId, { text: '日本ab', submit: true })
    expect(session.sends.map((sent) => Buffer.byteLength(sent.request.text ?? ''))).toEqual([8])
    session.sends[0]!.finish()
    await send.done
  })

  it('the default bound is 65536 bytes', async () => {
    const { h, backend, alice } = await withBackend()
    const { sessionId } = await h.terminals.spawn(alice, { type: 'shell' })
    expect(thrown(() => h.terminals.startSend(alice, sessionId, { text: 'x'.repeat(65_537), submit: true }))).toMatchObject({
      code: 'TEXT_TOO_LARGE',
      message: expect.stringContaining('65537 UTF-8 bytes, over the limit of 65536 bytes'),
    })
    h.terminals.startSend(alice, sessionId, { text: 'x'.repeat(65_536), submit: true })
    expect(backend.sessions[0]!.sends).toHaveLength(1)
  })
})

describe('session names', () => {
  const refused: [string, string][] = [
    ['escape (C0)', '\x1b[31mred'],
    ['bell (C0)', 'ding\x07'],
    ['newline (C0)', 'two\nlines'],
    ['carriage return (C0)', 'over\rwrite'],
    ['tab (C0)', 'a\tb'],
    ['NUL (C0)', 'nul\0'],
    ['DEL', 'del\x7f'],
    ['NEL (C1)', 'next\u0085line'],
    ['CSI (C1)', '\u009b31m'],
    ['line separator', 'a\u2028b'],
    ['paragraph separator', 'a\u2029b'],
    ['right-to-left override', 'abc\u202etxt.exe'],
    ['first-strong isolate', '\u2068x'],
    ['right-to-left mark', 'x\u200f'],
    ['arabic letter mark', 'x\u061c'],
    ['unpaired surrogate', 'x\ud800'],
  ]

  it.each(refused)('refuses a name with %s as INVALID_REQUEST', async (_label, name) => {
    const { h, backend, alice } = await withBackend()
    const refusal = await failure(h.terminals.spawn(alice, { type: 'shell', name }))
    expect(refusal).toMatchObject({ code: 'INVALID_REQUEST', message: expect.stringMatching(/^PTY session name must be printable text: /) })
    expect(backend.calls).toEqual([])
  })

  it('names the offending character and its position', async () => {
    const { h, alice } = await withBackend()
    expect(await failure(h.terminals.spawn(alice, { type: 'shell', name: 'ab\x1bc' }))).toEqual({
      name: 'TerminalError',
      code: 'INVALID_REQUEST',
      message: 'PTY session name must be printable text: character 3 is U+001B (a control character); use letters, digits, spaces and punctuation only',
    })
    expect(await failure(h.terminals.spawn(alice, { type: 'shell', name: '日\u202e' }))).toMatchObject({
      message: expect.stringContaining('character 2 is U+202E (a bidirectional formatting character)'),
    })
  })

  it('accepts ordinary Unicode names and shows them unchanged', async () => {
    const { h, alice } = await withBackend()
    const names = ['build ✓ 日本', 'main', 'café-2', '👩‍💻 dev', 'שלום', 'x'.repeat(MAX_SESSION_NAME_CODE_POINTS)]
    for (const name of names) await h.terminals.spawn(alice, { type: 'shell', name })
    expect(h.terminals.list(alice).map((snapshot) => snapshot.name)).toEqual(names)
  })

  it(`bounds a name to ${MAX_SESSION_NAME_CODE_POINTS} code points, not UTF-16 units`, async () => {
    const { h, alice } = await withBackend()
    // 64 astral code points are 128 UTF-16 units: still accepted
    const longest = '🙂'.repeat(MAX_SESSION_NAME_CODE_POINTS)
    expect((await h.terminals.spawn(alice, { type: 'shell', name: longest })).name).toBe(longest)
    expect(await failure(h.terminals.spawn(alice, { type: 'shell', name: `${longest}!` }))).toEqual({
      name: 'TerminalError',
      code: 'INVALID_REQUEST',
      message: 'PTY session name must be at most 64 characters (Unicode code points); choose a shorter name',
    })
    expect(await failure(h.terminals.spawn(alice, { type: 'shell', name: 'n'.repeat(1_000_000) }))).toMatchObject({ code: 'INVALID_REQUEST' })
  })
})
