import { keyNameProblem, MAX_TERMINAL_COLS, MAX_TERMINAL_KEYS, MAX_TERMINAL_ROWS, TERMINAL_KEY_NAMES } from 'dsh-terminal'
import { describe, expect, it } from 'vitest'
import { setup, StubBackend, thrown } from './helpers'

async function opened() {
  const h = await setup()
  const backend = new StubBackend()
  h.terminals.registerBackend(backend)
  const alice = await h.agent('alice')
  const { sessionId } = await h.terminals.spawn(alice, { type: 'shell', size: { rows: 30, cols: 100 } })
  return { h, backend, alice, sessionId, session: backend.sessions[0]! }
}

describe('key names', () => {
  it('accepts every named key, single characters and C-/M- combinations', () => {
    for (const key of [...TERMINAL_KEY_NAMES, 'a', 'Q', ':', ' ', 'é', '漢', '😀', 'C-c', 'C-X', 'C-[', 'C-?', 'C- ', 'M-x', 'M-Left', 'M-F10', 'M-C-a']) {
      expect(keyNameProblem(key), key).toBeUndefined()
    }
  })

  it('names what is wrong with a key a terminal cannot send', () => {
    expect(keyNameProblem('Escpe')).toBe('unknown key "Escpe"')
    expect(keyNameProblem('')).toBe('unknown key ""')
    expect(keyNameProblem('ab')).toBe('unknown key "ab"')
    expect(keyNameProblem('\n')).toBe('unknown key "\\n"')
    expect(keyNameProblem('\u0085')).toBe('unknown key "\u0085"')
    expect(keyNameProblem('C-1')).toMatch(/^C-1 has no control code/)
    expect(keyNameProblem('C-Left')).toMatch(/^C-Left has no control code/)
    expect(keyNameProblem('M-M-x')).toBe('M-M-x repeats M-')
    expect(keyNameProblem('M-Nope')).toBe('M-Nope: Nope is not a key')
  })
})

describe('screen requests reach the backend checked', () => {
  it('passes a spawn size, keys, a send size and a screen request through', async () => {
    const { h, alice, sessionId, session } = await opened()
    expect(session.spec.size).toEqual({ rows: 30, cols: 100 })
    const keys = h.terminals.startSend(alice, sessionId, { kind: 'keys', keys: ['Escape', ':', 'q', 'Enter'] })
    session.sends[0]!.finish()
    await keys.done
    h.terminals.startSend(alice, sessionId, { text: '', submit: false, size: { rows: MAX_TERMINAL_ROWS, cols: MAX_TERMINAL_COLS } })
    expect(session.sends.map((send) => send.request)).toEqual([
      { kind: 'keys', keys: ['Escape', ':', 'q', 'Enter'] },
      { text: '', submit: false, size: { rows: MAX_TERMINAL_ROWS, cols: MAX_TERMINAL_COLS } },
    ])
    expect(await h.terminals.screen(alice, sessionId)).toBeUndefined()
    session.screen = async () => ({ lines: ['~'], size: { rows: 30, cols: 100 }, cursor: { row: 1, col: 1 }, alternateScreen: true })
    expect(await h.terminals.screen(alice, sessionId)).toEqual({
      lines: ['~'],
      size: { rows: 30, cols: 100 },
      cursor: { row: 1, col: 1 },
      alternateScreen: true,
    })
  })

  it('refuses keys with text, bad key lists and bad names before the backend sees them', async () => {
    const { h, alice, sessionId, session } = await opened()
    const send = (request: object) => thrown(() => h.terminals.startSend(alice, sessionId, { text: '', submit: false, ...request }))
    const invalid = (message: string) => ({ name: 'TerminalError', code: 'INVALID_REQUEST', message })
    const both = invalid('PTY send takes keys or text, not both: with keys, text must be empty and submit false (press Enter as a key)')
    expect(send({ text: 'ls', keys: ['Enter'] })).toEqual(both)
    expect(send({ submit: true, keys: ['Enter'] })).toEqual(both)
    const list = invalid(`PTY send keys must be a list of 1 to ${MAX_TERMINAL_KEYS} key names`)
    expect(send({ keys: [] })).toEqual(list)
    expect(send({ keys: 'Enter' })).toEqual(list)
    expect(send({ keys: Array.from({ length: MAX_TERMINAL_KEYS + 1 }, () => 'a') })).toEqual(list)
    expect(send({ keys: ['Up', 'Escpe'] })).toEqual(invalid('PTY send keys: unknown key "Escpe"'))
    expect(send({ keys: [7] })).toEqual(invalid('PTY send keys: a key name must be a string'))
    expect(session.sends).toEqual([])
  })

  it('takes each kind of send, and keys given the older way arrive as a keys send', async () => {
    const { h, alice, sessionId, session } = await opened()
    const size = { rows: 24, cols: 80 }
    for (const request of [
      { kind: 'keys', keys: ['q'], size },
      { kind: 'resize', size },
      { kind: 'wait' },
      { kind: 'text', text: 'ls', submit: true },
    ] as const) {
      const handle = h.terminals.startSend(alice, sessionId, request)
      session.sends.at(-1)!.finish()
      await handle.done
    }
    h.terminals.startSend(alice, sessionId, { text: '', submit: false, keys: ['Up'] } as never)
    expect(session.sends.map((send) => send.request)).toEqual([
      { kind: 'keys', keys: ['q'], size },
      { kind: 'resize', size },
      { kind: 'wait' },
      { kind: 'text', text: 'ls', submit: true },
      { kind: 'keys', keys: ['Up'] },
    ])
  })

  it('refuses what a kind does not take, one stable code for every kind', async () => {
    const { h, alice, sessionId, session } = await opened()
    const send = (request: object) => thrown(() => h.terminals.startSend(alice, sessionId, request as never))
    const invalid = (message: string) => ({ name: 'TerminalError', code: 'INVALID_REQUEST', message })
    expect(send({ kind: 'text', text: 7, submit: true })).toEqual(invalid('PTY send text must be a string'))
    expect(send({ kind: 'text', text: 'ls' })).toEqual(invalid('PTY send submit must be a boolean'))
    expect(send({ kind: 'keys', keys: ['q'], text: 'ls' })).toEqual(
      invalid('PTY send takes keys or text, not both: with keys, text must be empty and submit false (press Enter as a key)'),
    )
    expect(send({ kind: 'keys' })).toEqual(invalid(`PTY send keys must be a list of 1 to ${MAX_TERMINAL_KEYS} key names`))
    expect(send({ kind: 'resize' })).toEqual(invalid('PTY send of kind resize needs size {rows, cols}'))
    expect(send({ kind: 'resize', size: { rows: 24, cols: 80 }, text: 'ls' })).toEqual(invalid('PTY send of kind resize takes no text'))
    expect(send({ kind: 'wait', size: { rows: 24, cols: 80 } })).toEqual(invalid('PTY send of kind wait takes no size'))
    expect(send({ kind: 'wait', keys: ['q'] })).toEqual(invalid('PTY send of kind wait takes no keys'))
    expect(send({ kind: 'paste', text: 'ls' })).toEqual(invalid('PTY send kind must be text, keys, resize or wait'))
    expect(session.sends).toEqual([])
  })

  it('refuses sizes outside the bounds on spawn and send', async () => {
    const { h, alice, sessionId, session } = await opened()
    const message = (what: string) => `${what} must be {rows, cols} with rows from 1 to ${MAX_TERMINAL_ROWS} and cols from 1 to ${MAX_TERMINAL_COLS}`
    for (const size of [
      { rows: 0, cols: 80 },
      { rows: 24, cols: MAX_TERMINAL_COLS + 1 },
      { rows: MAX_TERMINAL_ROWS + 1, cols: 80 },
      { rows: 2.5, cols: 80 },
      { rows: 24 },
      null,
    ]) {
      expect(thrown(() => h.terminals.startSend(alice, sessionId, { text: '', submit: false, size: size as never }))).toMatchObject({
        code: 'INVALID_REQUEST',
        message: message('PTY send size'),
      })
      await expect(h.terminals.spawn(alice, { type: 'shell', size: size as never })).rejects.toMatchObject({
        code: 'INVALID_REQUEST',
        message: message('PTY spawn size'),
      })
    }
    expect(session.sends).toEqual([])
  })
})
