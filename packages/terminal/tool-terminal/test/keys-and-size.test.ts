import { TERMINAL_KEY_NAMES } from 'dsh-terminal'
import { keysProblem, suggestKeyName } from '../src/internal'
import { afterEach, describe, expect, it } from 'vitest'
import { disposeAll, setup } from './harness'

// What a model asks a send or an open to do with keys and window sizes, checked before anything
// is written, and what reaches the backend.

afterEach(disposeAll)

const INVALID = 'Error: invalid arguments for tool "terminal_send": '

async function openedShell(config: Parameters<typeof setup>[0] = {}) {
  const h = await setup(config)
  await h.call('terminal_open', { type: 'shell' })
  return { h, session: h.backend.session('pty-1') }
}

describe('terminal_send keys', () => {
  it('presses the keys: the backend gets a keys send (no text, no Enter)', async () => {
    const { h, session } = await openedShell()
    const keys = ['Escape', ':', 'w', 'q', 'Enter', 'C-c', 'M-x', 'F10', 'S-Tab', 'é']
    const result = await h.call('terminal_send', { sessionId: 'pty-1', keys })
    expect(result.isError).toBe(false)
    const request = session.sends[0]!.request
    expect({ kind: request.kind, text: request.text, submit: request.submit, keys: request.keys, size: request.size }).toEqual({
      kind: 'keys',
      text: undefined,
      submit: undefined,
      keys,
      size: undefined,
    })
    expect(result.presentation).toMatchObject({ title: 'pty-1: keys Escape : w q Enter C-c M-x F10 S-Tab é', card: { type: 'terminal', sessionId: 'pty-1' } })
  })

  it('an unknown key names what was probably meant and lists every valid key; nothing is sent', async () => {
    const { h, session } = await openedShell()
    const refused = await h.call('terminal_send', { sessionId: 'pty-1', keys: ['Esc', 'q', 'ctrl-c', 'Enter'] })
    expect(refused.error?.code).toBe('INVALID_ARGUMENTS')
    const text = h.text(refused)
    expect(
      text.startsWith(
        `${INVALID}keys: keys[0]: unknown key "Esc" (did you mean "Escape"?); keys[2]: unknown key "ctrl-c" (did you mean "C-c"?). A key is one of Enter, Tab, S-Tab, Escape,`,
      ),
    ).toBe(true)
    for (const name of TERMINAL_KEY_NAMES) expect(text).toContain(name)
    expect(text.endsWith('or any single character as itself (e.g. "q", ":"). To type text, give text instead of keys')).toBe(true)
    expect(session.sends).toEqual([])
  })

  it('suggests the key a model probably meant, and nothing for what means nothing', () => {
    expect(
      ['enter', 'ESC', 'Return', 'PgDn', 'ArrowUp', 'Ctrl-X', 'Alt-x', 'alt+Esc', '^D', '\n', '\t', '\u001b', '\u0003', 'Shift-Tab', 'f10'].map(suggestKeyName),
    ).toEqual(['Enter', 'Escape', 'Enter', 'PageDown', 'Up', 'C-x', 'M-x', 'M-Escape', 'C-d', 'Enter', 'Tab', 'Escape', 'C-c', 'S-Tab', 'F10'])
    expect(['Hyper', 'ctrl-1', 'qq', ''].map(suggestKeyName)).toEqual([undefined, undefined, undefined, undefined])
  })

  it('names a key that has no control code, and counts problems past the first five', () => {
    expect(keysProblem(['C-1'])).toMatch(/^keys\[0\]: C-1 has no control code \(C- takes a letter or one of @\[\\\]\^_\? and space\)\. A key is one of /)
    expect(keysProblem(['q', 'Enter', 'C-x', 'M-Up'])).toBeUndefined()
    expect(keysProblem(Array.from({ length: 8 }, () => 'nope'))).toMatch(/keys\[4\]: unknown key "nope"; and 3 more\. A key is one of /)
  })

  it('refuses text with keys, submit with keys, an empty list, a list too long, and a call with neither', async () => {
    const { h, session } = await openedShell()
    const refusals: [Record<string, unknown>, string][] = [
      [{ text: 'ls', keys: ['Enter'] }, 'keys: give text (typed) or keys (pressed), not both; to press Enter after keys, add "Enter" to keys'],
      [{ keys: ['q'], submit: true }, 'submit: submit applies to text only: press Enter as a key, e.g. keys: ["q", "Enter"]'],
      [{ keys: ['q'], submit: false }, 'submit: submit applies to text only: press Enter as a key, e.g. keys: ["q", "Enter"]'],
      [{ keys: [] }, 'keys: keys must name at least one key'],
      [{ keys: Array.from({ length: 257 }, () => 'x') }, 'keys: keys must name at most 256 keys; to type a long text, give text instead'],
      [{}, 'text: give text to type or keys to press (or only rows and cols, to resize); text "" with submit false sends nothing and waits'],
      [
        { submit: false },
        'text: give text to type or keys to press (or only rows and cols, to resize); text "" with submit false sends nothing and waits; submit: submit applies to text only',
      ],
      [
        { keys: ['q'], run_in_background: true },
        'run_in_background: run_in_background takes text only: press keys and resize in the foreground, where the result shows the screen',
      ],
    ]
    for (const [args, message] of refusals) {
      const refused = await h.call('terminal_send', { sessionId: 'pty-1', ...args })
      expect({ args, text: h.text(refused), code: refused.error?.code }).toEqual({ args, text: `${INVALID}${message}`, code: 'INVALID_ARGUMENTS' })
    }
    expect(session.sends).toEqual([])
  })

  it('text "" with submit false still sends nothing and waits, as before', async () => {
    const { h, session } = await openedShell()
    await h.call('terminal_send', { sessionId: 'pty-1', text: '', submit: false })
    const request = session.sends[0]!.request
    expect({ text: request.text, submit: request.submit, keys: request.keys }).toEqual({ text: '', submit: false, keys: undefined })
  })
})

describe('window sizes', () => {
  it('terminal_open passes rows and cols to the backend; meta and terminal_list show the size', async () => {
    const h = await setup()
    const opened = await h.call('terminal_open', { type: 'shell', name: 'wide', rows: 40, cols: 160 })
    expect(h.text(opened)).toBe('started terminal session pty-1 (wide) [type: shell]\nstub shell ready')
    expect(h.backend.session('pty-1').spec.size).toEqual({ rows: 40, cols: 160 })
    expect(opened.meta).toMatchObject({ sessionId: 'pty-1', size: { rows: 40, cols: 160 } })
    await h.call('terminal_open', { type: 'shell' })
    expect(h.backend.session('pty-2').spec.size).toBeUndefined()
    const listed = await h.call('terminal_list')
    expect(h.text(listed)).toBe('pty-1 (wide) [shell] running pid=4001 size=160x40\npty-2 [shell] running pid=4002')
    expect(((listed.meta?.sessions ?? []) as { size?: unknown }[]).map((session) => session.size)).toEqual([{ rows: 40, cols: 160 }, undefined])
  })

  it('terminal_open refuses one of rows and cols alone, and sizes outside the bounds', async () => {
    const h = await setup()
    const open = async (args: Record<string, unknown>) => h.text(await h.call('terminal_open', { type: 'shell', ...args }))
    const prefix = 'Error: invalid arguments for tool "terminal_open": '
    expect(await open({ rows: 40 })).toBe(`${prefix}cols: rows and cols go together: give both (e.g. rows 40, cols 120) or neither; cols is missing`)
    expect(await open({ cols: 120 })).toBe(`${prefix}rows: rows and cols go together: give both (e.g. rows 40, cols 120) or neither; rows is missing`)
    expect(await open({ rows: 501, cols: 80 })).toBe(`${prefix}rows: rows must be at most 500`)
    expect(await open({ rows: 24, cols: 1001 })).toBe(`${prefix}cols: cols must be at most 1000`)
    expect(await open({ rows: 0, cols: 80 })).toBe(`${prefix}rows: rows must be at least 1`)
    expect(await open({ rows: 24.5, cols: 80 })).toBe(`${prefix}rows: rows must be a whole number of rows`)
    expect(h.backend.sessions).toEqual([])
  })

  it('terminal_send with only rows and cols resizes: no text, no Enter, and the redrawn screen comes back', async () => {
    const { h, session } = await openedShell()
    const screen = { lines: ['redrawn'], size: { rows: 30, cols: 100 }, cursor: { row: 1, col: 8 }, alternateScreen: true }
    session.replies.push({ viewport: '', waitReason: 'stdin_read', exitCode: undefined, screen })
    const result = await h.call('terminal_send', { sessionId: 'pty-1', rows: 30, cols: 100 })
    expect(h.text(result)).toBe('[screen: 100 cols x 30 rows, cursor at row 1, col 8, alternate]\nredrawn\n[wait: stdin_read]\n[session: running]')
    const request = session.sends[0]!.request
    expect({ kind: request.kind, text: request.text, submit: request.submit, keys: request.keys, size: request.size }).toEqual({
      kind: 'resize',
      text: undefined,
      submit: undefined,
      keys: undefined,
      size: { rows: 30, cols: 100 },
    })
    expect(result.presentation.title).toBe('pty-1: resize to 100x30')
    expect(h.text(await h.call('terminal_list'))).toBe('pty-1 [shell] running pid=4001 size=100x30')
  })

  it('terminal_send resizes before its text or keys; one of rows and cols alone is refused', async () => {
    const { h, session } = await openedShell()
    await h.call('terminal_send', { sessionId: 'pty-1', text: 'stty size', rows: 24, cols: 80 })
    await h.call('terminal_send', { sessionId: 'pty-1', keys: ['C-l'], rows: 25, cols: 81 })
    expect(
      session.sends.map(({ request }) => ({ kind: request.kind, text: request.text, submit: request.submit, keys: request.keys, size: request.size })),
    ).toEqual([
      { kind: undefined, text: 'stty size', submit: true, keys: undefined, size: { rows: 24, cols: 80 } },
      { kind: 'keys', text: undefined, submit: undefined, keys: ['C-l'], size: { rows: 25, cols: 81 } },
    ])
    const half = await h.call('terminal_send', { sessionId: 'pty-1', rows: 24 })
    expect(h.text(half)).toBe(`${INVALID}cols: rows and cols go together: give both (e.g. rows 40, cols 120) or neither; cols is missing`)
    const background = await h.call('terminal_send', { sessionId: 'pty-1', text: 'top', rows: 24, cols: 80, run_in_background: true })
    expect(h.text(background)).toBe(
      `${INVALID}run_in_background: run_in_background takes text only: press keys and resize in the foreground, where the result shows the screen`,
    )
    expect(session.sends).toHaveLength(2)
  })
})
