import type { TerminalScreen } from 'dsh-terminal'
import { fitResult, screenHeader, screenLine, sendLayout, TRUNCATION_MARKER } from '../src/internal'
import { utf8ByteLength } from 'dsh-basics'
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { disposeAll, setup } from './harness'

// A full-screen program's screen: how terminal_read {view: "screen"} and a send that settles while
// such a program holds the terminal render it, and how both stay within their bound.

afterEach(disposeAll)

const vimScreen: TerminalScreen = {
  lines: ['hello', '~', '~', '~', '-- INSERT --'],
  size: { rows: 5, cols: 40 },
  cursor: { row: 1, col: 6 },
  alternateScreen: true,
  title: 'notes.txt (~/work) - VIM',
}

const vimInput = { kind: 'keys', program: { name: 'vim', pid: 4711 }, alternateScreen: true } as const

const VIM_READ = [
  '[screen: 40 cols x 5 rows, cursor at row 1, col 6, alternate]',
  '[title: notes.txt (~/work) - VIM]',
  'hello',
  '~',
  '~',
  '~',
  '-- INSERT --',
  '[input: keys (vim, pid 4711, alternate screen)]',
].join('\n')

/** A harness with one session, pty-1, whose backend shows `screen`. */
async function sessionShowing(screen: TerminalScreen | undefined, config: Parameters<typeof setup>[0] = {}) {
  const h = await setup(config)
  await h.call('terminal_open', { type: 'shell' })
  const session = h.backend.session('pty-1')
  session.shownScreen = screen
  return { h, session }
}

describe('the screen line', () => {
  it('gives rows x cols, the 1-based cursor, and alternate only on the alternate screen', () => {
    expect(screenLine(vimScreen)).toBe('[screen: 40 cols x 5 rows, cursor at row 1, col 6, alternate]')
    expect(screenLine({ ...vimScreen, size: { rows: 40, cols: 160 }, cursor: { row: 12, col: 5 }, alternateScreen: false })).toBe(
      '[screen: 160 cols x 40 rows, cursor at row 12, col 5]',
    )
  })

  it('puts a title on its own line, as one bounded line; no title, no line', () => {
    expect(screenHeader({ ...vimScreen, title: undefined })).toBe('[screen: 40 cols x 5 rows, cursor at row 1, col 6, alternate]')
    expect(screenHeader({ ...vimScreen, title: 'a\nb\u001b[31m' })).toBe('[screen: 40 cols x 5 rows, cursor at row 1, col 6, alternate]\n[title: a b [31m]')
    const long = screenHeader({ ...vimScreen, title: 'é'.repeat(300) }).split('\n')[1]!
    expect(long.startsWith('[title: éé')).toBe(true)
    expect(long.endsWith('…]')).toBe(true)
    expect(utf8ByteLength(long)).toBeLessThanOrEqual(200 + utf8ByteLength('[title: ]'))
  })
})

describe('terminal_read {view: "screen"}', () => {
  it('returns the rows under the screen line, then the input line; meta holds the facts, not the rows', async () => {
    const { h, session } = await sessionShowing(vimScreen)
    session.input = vimInput
    const result = await h.call('terminal_read', { sessionId: 'pty-1', view: 'screen' })
    expect(h.text(result)).toBe(VIM_READ)
    expect(result.meta).toEqual({
      sessionId: 'pty-1',
      screen: { size: { rows: 5, cols: 40 }, cursor: { row: 1, col: 6 }, alternateScreen: true, title: 'notes.txt (~/work) - VIM' },
      input: vimInput,
      output: { bytes: 24, lines: 5, shownBytes: 24, foldedLines: 0, omittedLines: 0, omittedBytes: 0 },
      truncated: false,
    })
    expect(result.presentation).toMatchObject({ kind: 'read', title: 'read pty-1 screen' })
    // The screen is asked for on its own: no page of lines is read, none is marked as taken.
    expect(session.reads).toEqual([])
    expect(session.screenCalls).toBe(1)
  })

  it('never folds rows (a row is a place on the screen) and shows a blank screen as such', async () => {
    const { h, session } = await sessionShowing({
      lines: ['x', '~', '~', '~', '~', '~', 'y'],
      size: { rows: 7, cols: 10 },
      cursor: { row: 7, col: 1 },
      alternateScreen: false,
    })
    expect(h.text(await h.call('terminal_read', { sessionId: 'pty-1', view: 'screen' }))).toBe(
      '[screen: 10 cols x 7 rows, cursor at row 7, col 1]\nx\n~\n~\n~\n~\n~\ny',
    )
    session.shownScreen = { lines: [], size: { rows: 24, cols: 80 }, cursor: { row: 1, col: 1 }, alternateScreen: true }
    const blank = await h.call('terminal_read', { sessionId: 'pty-1', view: 'screen' })
    expect(h.text(blank)).toBe('[screen: 80 cols x 24 rows, cursor at row 1, col 1, alternate]\n(blank screen)')
    expect(blank.meta?.output).toMatchObject({ bytes: 0, lines: 0 })
  })

  it('view "lines" is the default page of lines', async () => {
    const { h, session } = await sessionShowing(vimScreen)
    session.lines = ['a', 'b']
    expect(h.text(await h.call('terminal_read', { sessionId: 'pty-1', view: 'lines' }))).toBe('a\nb\n[lines: 1-2 of 2]')
    expect(session.reads).toEqual([{ count: 500 }])
    expect(session.screenCalls).toBe(0)
  })

  it('refuses offset, fromLine and count with the screen view, naming each', async () => {
    const { h, session } = await sessionShowing(vimScreen)
    for (const key of ['offset', 'fromLine', 'count'] as const) {
      const refused = await h.call('terminal_read', { sessionId: 'pty-1', view: 'screen', [key]: 1 })
      expect(refused.error?.code).toBe('INVALID_ARGUMENTS')
      expect(h.text(refused)).toBe(
        `Error: invalid arguments for tool "terminal_read": ${key}: ${key} pages the line history; view "screen" shows the screen as it is now: leave ${key} out, or read lines without view`,
      )
    }
    const unknownView = await h.call('terminal_read', { sessionId: 'pty-1', view: 'pixels' })
    expect(unknownView.error?.code).toBe('INVALID_ARGUMENTS')
    expect(h.text(unknownView)).toContain('view: Invalid option: expected one of "lines"|"screen"')
    expect(session.screenCalls).toBe(0)
  })

  it('a backend without a screen is NO_SCREEN, pointing at the lines view', async () => {
    const { h } = await sessionShowing(undefined)
    const refused = await h.call('terminal_read', { sessionId: 'pty-1', view: 'screen' })
    expect(refused.error?.code).toBe('NO_SCREEN')
    expect(h.text(refused)).toBe(
      'Error: terminal session pty-1 has no screen to show: its backend keeps no terminal emulator, or the session is closing. Read its output with terminal_read without view.',
    )
    const foreign = await h.call('terminal_read', { sessionId: 'pty-9', view: 'screen' })
    expect(foreign.error?.code).toBe('NO_SESSION')
  })

  it('a screen larger than maxBytes keeps its top and bottom rows around one elision, the screen line whole', async () => {
    const lines = Array.from({ length: 100 }, (_, row) => `row ${row + 1} ${'é'.repeat(30)}`)
    const { h } = await sessionShowing({ lines, size: { rows: 100, cols: 80 }, cursor: { row: 100, col: 1 }, alternateScreen: true })
    const result = await h.call('terminal_read', { sessionId: 'pty-1', view: 'screen', maxBytes: 1024 })
    const text = h.text(result)
    expect(utf8ByteLength(text)).toBeLessThanOrEqual(1024)
    const shown = text.split('\n')
    expect(shown[0]).toBe('[screen: 80 cols x 100 rows, cursor at row 100, col 1, alternate]')
    expect(shown[1]).toBe(lines[0])
    expect(shown.at(-2)).toBe(lines[99])
    expect(shown.at(-1)).toBe(TRUNCATION_MARKER)
    const elisions = shown.filter((line) => /^\[… \d+ lines \([^)]+\) left out\]$/.test(line))
    expect(elisions).toHaveLength(1)
    expect(result.meta?.truncated).toBe(true)
    expect(result.meta?.output).toMatchObject({ lines: 100, omittedLines: 100 - (shown.length - 3) })
  })
})

describe('a send that settles while a full-screen program holds the terminal', () => {
  it('shows the screen instead of the viewport, keeping the wait, input, exit and session lines', async () => {
    const { h, session } = await sessionShowing(undefined)
    session.replies.push({ viewport: '\u001b[?1049h redraw soup', waitReason: 'stdin_read', exitCode: undefined, input: vimInput, screen: vimScreen })
    const result = await h.call('terminal_send', { sessionId: 'pty-1', text: 'vim notes.txt' })
    expect(h.text(result)).toBe(
      [
        '[screen: 40 cols x 5 rows, cursor at row 1, col 6, alternate]',
        '[title: notes.txt (~/work) - VIM]',
        'hello',
        '~',
        '~',
        '~',
        '-- INSERT --',
        '[wait: stdin_read]',
        '[input: keys (vim, pid 4711, alternate screen)]',
        '[session: running]',
      ].join('\n'),
    )
    expect(result.meta).toEqual({
      sessionId: 'pty-1',
      background: false,
      waitReason: 'stdin_read',
      sessionStatus: { kind: 'running' },
      input: vimInput,
      screen: { size: { rows: 5, cols: 40 }, cursor: { row: 1, col: 6 }, alternateScreen: true, title: 'notes.txt (~/work) - VIM' },
      output: { bytes: 24, lines: 5, shownBytes: 24, foldedLines: 0, omittedLines: 0, omittedBytes: 0 },
      truncated: false,
    })
  })

  it('puts earlier output first, under its marker, and ignores what the unshown viewport lost', async () => {
    const { h, session } = await sessionShowing(undefined)
    const screen = { ...vimScreen, title: undefined, alternateScreen: false, lines: ['top - 10:00:01 up 1 day', 'Tasks: 1 total'] }
    session.replies.push({ viewport: 'soup', truncated: true, earlierOutput: 'late line\n', waitReason: 'stdin_read', exitCode: undefined, screen })
    const result = await h.call('terminal_send', { sessionId: 'pty-1', text: 'top' })
    expect(h.text(result)).toBe(
      [
        '[earlier output, printed after the previous result]',
        'late line',
        '[screen: 40 cols x 5 rows, cursor at row 1, col 6]',
        'top - 10:00:01 up 1 day',
        'Tasks: 1 total',
        '[wait: stdin_read]',
        '[session: running]',
      ].join('\n'),
    )
    expect(result.meta?.truncated).toBe(false)
  })

  it('a result without a screen still shows the viewport (a program that left the screen)', async () => {
    const { h, session } = await sessionShowing(undefined)
    session.replies.push({ viewport: ':wq\ndsh> ', waitReason: 'stdin_read', exitCode: 0 })
    expect(h.text(await h.call('terminal_send', { sessionId: 'pty-1', keys: [':', 'w', 'q', 'Enter'] }))).toBe(
      ':wq\ndsh> \n[wait: stdin_read]\n[exit: 0]\n[session: running]',
    )
  })

  it('stays within every cap on code-point boundaries, with exactly one marker when it lost bytes', async () => {
    const lines = Array.from({ length: 60 }, (_, row) => `${row}:${'漢'.repeat(row % 7)}${'x'.repeat(row % 5)}`)
    const screen: TerminalScreen = { lines, size: { rows: 60, cols: 40 }, cursor: { row: 3, col: 4 }, alternateScreen: true, title: 'tïtle' }
    const { h, session } = await sessionShowing(undefined, { config: { maxResultBytes: 4096 } })
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 64, max: 4096 }), fc.boolean(), async (cap, withEarlier) => {
        session.replies.push({
          viewport: 'soup',
          waitReason: 'stdin_read',
          exitCode: undefined,
          input: vimInput,
          screen,
          ...(withEarlier ? { earlierOutput: 'éarlier\n'.repeat(20) } : {}),
        })
        const result = await h.call('terminal_send', { sessionId: 'pty-1', keys: ['Down'], maxBytes: cap })
        const text = h.text(result)
        expect(utf8ByteLength(text)).toBeLessThanOrEqual(cap)
        expect(text).not.toContain('\uFFFD')
        const markers = text.split(TRUNCATION_MARKER).length - 1
        expect(markers).toBe(result.meta?.truncated ? 1 : 0)
        if (result.meta?.truncated) expect(text.endsWith(`\n${TRUNCATION_MARKER}`)).toBe(true)
        // Once the required lines fit, the screen line, the wait and the session lines are all there.
        if (cap >= 160) {
          const shown = text.split('\n')
          const screenAt = shown.indexOf('[screen: 40 cols x 60 rows, cursor at row 3, col 4, alternate]')
          expect(screenAt).toBeGreaterThanOrEqual(0)
          expect(shown[screenAt + 1]).toBe('[title: tïtle]')
          // Earlier output, when any of it is shown, comes before the screen, never inside it.
          expect(screenAt === 0 || shown[0] === '[earlier output, printed after the previous result]').toBe(true)
          expect(shown).toContain('[wait: stdin_read]')
          expect(shown).toContain('[session: running]')
        }
      }),
      { numRuns: 60 },
    )
  })
})

describe('a program that drew in place on the normal screen', () => {
  const drawn: TerminalScreen = { lines: ['[x] fetch', '[ ] build', 'dsh>'], size: { rows: 3, cols: 40 }, cursor: { row: 3, col: 6 }, alternateScreen: false }
  const back = { sessionId: 'pty-1', windowBytes: 16_384, maxResultBytes: 65_536 }
  const settled = { waitReason: 'stdin_read', sessionStatus: { kind: 'running' }, truncated: false, screen: drawn } as const

  it('shows its screen, and names the read of its lines when they were more than the screen shows', () => {
    const viewport = ['make', ...Array.from({ length: 20 }, (_, index) => `step ${index}`), 'dsh> '].join('\n')
    const text = fitResult(sendLayout({ ...settled, viewport, firstLine: 7 }, back), 4000).text
    expect(text.split('\n').slice(0, 5)).toEqual([
      '[screen: 40 cols x 3 rows, cursor at row 3, col 6]',
      '[drawn in place: the screen shows the end of 22 lines of output; terminal_read {"sessionId":"pty-1","fromLine":7,"count":22} returns them]',
      '[x] fetch',
      '[ ] build',
      'dsh>',
    ])
    expect(text).not.toContain('step 3')
  })

  it('names no read when the screen holds the whole output', () => {
    const text = fitResult(sendLayout({ ...settled, viewport: 'a\nb', firstLine: 7 }, back), 4000).text
    expect(text.split('\n').slice(0, 4)).toEqual(['[screen: 40 cols x 3 rows, cursor at row 3, col 6]', '[x] fetch', '[ ] build', 'dsh>'])
  })
})
