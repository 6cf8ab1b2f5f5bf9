import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TerminalSendResult, TerminalSessionId } from 'dsh-terminal'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { installed } from 'dsh-testkit'
import { startStack, type Stack } from './support/stack'

// Full-screen, key-reading programs must settle exactly: the send that starts one, every key sent
// to it and the one that quits it end on a proven wait (`stdin_read`), never by silence. The
// patient stack would take 20 s of silence to end a send, so a miss shows as `inferred_idle` or
// `timeout`, not as a lucky pass. TERM is set in each command so the tests do not depend on what
// the session advertises by default.
let stack: Stack
let work: string
let id: TerminalSessionId | undefined

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'dsh-fullscreen-'))
  writeFileSync(join(work, 'menu.py'), CURSES_MENU)
  writeFileSync(join(work, 'menu.js'), EVENT_LOOP_MENU)
  stack = await startStack()
})
afterEach(async () => {
  if (id) await stack.terminals.close(stack.agent, id).catch(() => undefined)
  id = undefined
})
afterAll(async () => {
  await stack.dispose()
  rmSync(work, { recursive: true, force: true })
})

/** A three-item menu: Down/Up move, Enter picks (printed after the screen is restored), q quits. */
const CURSES_MENU = `import curses

def menu(screen):
    curses.curs_set(0)
    items = ['alpha', 'beta', 'gamma']
    chosen = 0
    while True:
        screen.erase()
        for row, item in enumerate(items):
            screen.addstr(row, 0, item, curses.A_REVERSE if row == chosen else curses.A_NORMAL)
        screen.refresh()
        key = screen.getch()
        if key == curses.KEY_DOWN:
            chosen = min(chosen + 1, len(items) - 1)
        elif key == curses.KEY_UP:
            chosen = max(chosen - 1, 0)
        elif key in (10, 13, curses.KEY_ENTER):
            return items[chosen]
        elif key == ord('q'):
            return 'none'

print('picked=' + curses.wrapper(menu))
`

/**
 * The same menu on node's event loop (an epoll wait), drawn on the alternate screen with the cursor
 * parked on an empty row: nothing on the cursor's line announces the wait. j/k move, q quits.
 */
const EVENT_LOOP_MENU = `const items = ['alpha', 'beta', 'gamma']
let chosen = 0
function draw() {
  let frame = '\\x1b[H\\x1b[2J'
  items.forEach((item, row) => { frame += '\\x1b[' + (row + 1) + ';1H' + (row === chosen ? '> ' : '  ') + item })
  process.stdout.write(frame + '\\x1b[20;1H')
}
process.stdin.setRawMode(true)
process.stdout.write('\\x1b[?1049h')
draw()
process.stdin.on('data', (data) => {
  const key = data.toString()
  if (key === 'q') {
    process.stdout.write('\\x1b[?1049lpicked=' + items[chosen] + '\\n')
    process.exit(0)
  }
  if (key === 'j') chosen = Math.min(chosen + 1, items.length - 1)
  if (key === 'k') chosen = Math.max(chosen - 1, 0)
  draw()
})
`

const TERM = 'TERM=xterm-256color'
/** Down as curses programs ask for it: they switch the cursor keys to application mode (`kcud1`). */
const DOWN = '\u001bOB'

/** A fresh session in the work directory for one program. */
async function session(): Promise<TerminalSessionId> {
  id = (await stack.open({ cwd: work })).sessionId
  return id
}

/** The send settled on a proven wait with the program in front reading keys. */
function expectKeys(result: TerminalSendResult, name: string, alternateScreen = true): void {
  expect({ waitReason: result.waitReason, input: result.input }).toEqual({
    waitReason: 'stdin_read',
    input: { kind: 'keys', alternateScreen, program: expect.objectContaining({ name, pid: expect.any(Number) }) },
  })
}

/** The send settled on the shell's own prompt. */
function expectPrompt(result: TerminalSendResult): void {
  expect({ waitReason: result.waitReason, input: result.input }).toEqual({ waitReason: 'stdin_read', input: { kind: 'prompt' } })
}

/** Send raw key bytes (no Enter appended). */
function keys(session: TerminalSessionId, bytes: string): Promise<TerminalSendResult> {
  return stack.run(session, bytes, { submit: false })
}

describe('full-screen programs settle as stdin_read reading keys', () => {
  it.skipIf(!installed('vim'))('vim: start, insert, Escape and :wq', async () => {
    const s = await session()
    expectKeys(await stack.run(s, `${TERM} vim -u NONE -N notes.txt`), 'vim')
    expectKeys(await keys(s, 'ihello'), 'vim')
    expectPrompt(await keys(s, '\u001b:wq\r'))
    expect(readFileSync(join(work, 'notes.txt'), 'utf8')).toBe('hello\n')
  })

  it.skipIf(!installed('less'))('less: start, a line down, quit', async () => {
    const s = await session()
    expectKeys(await stack.run(s, `seq 1 500 | ${TERM} less`), 'less')
    expectKeys(await keys(s, 'j'), 'less')
    expectKeys(await keys(s, ' '), 'less')
    expectPrompt(await keys(s, 'q'))
  })

  it.skipIf(!installed('top'))('top (redraws on its own every second): start, a key, quit', async () => {
    const s = await session()
    // procps top clears the screen rather than switching to the alternate one: known by its name.
    expectKeys(await stack.run(s, `${TERM} top -d 1`), 'top', false)
    expectKeys(await keys(s, 'c'), 'top', false)
    expectKeys(await keys(s, 'c'), 'top', false)
    expectPrompt(await keys(s, 'q'))
  })

  it.skipIf(!installed('top'))('top refreshing ten times a second: its 100 ms waits count once it outlived one', async () => {
    const s = await session()
    expectKeys(await stack.run(s, `${TERM} top -d 0.1`), 'top', false)
    expectKeys(await keys(s, 'c'), 'top', false)
    expectPrompt(await keys(s, 'q'))
  })

  it.skipIf(!installed('htop'))('htop refreshing ten times a second: start, Down, quit', async () => {
    const s = await session()
    expectKeys(await stack.run(s, `${TERM} htop -d 1`), 'htop')
    expectKeys(await keys(s, DOWN), 'htop')
    expectPrompt(await keys(s, 'q'))
  })

  it.skipIf(!installed('htop'))('htop (redraws on its own): start, Down, quit', async () => {
    const s = await session()
    expectKeys(await stack.run(s, `${TERM} htop -d 5`), 'htop')
    expectKeys(await keys(s, DOWN), 'htop')
    expectPrompt(await keys(s, 'q'))
  })

  it.skipIf(!installed('nano'))('nano: start, type, save with C-o Enter, leave with C-x', async () => {
    const s = await session()
    expectKeys(await stack.run(s, `${TERM} nano -R story.txt`), 'nano')
    expectKeys(await keys(s, 'once upon'), 'nano')
    expectKeys(await keys(s, '\u000f'), 'nano')
    expectKeys(await keys(s, '\r'), 'nano')
    expectPrompt(await keys(s, '\u0018'))
    expect(readFileSync(join(work, 'story.txt'), 'utf8')).toBe('once upon\n')
  })

  it.skipIf(!installed('man') || !installed('less'))('man with less as its pager: the pager reads the keys', async () => {
    const s = await session()
    expectKeys(await stack.run(s, `${TERM} man -P less ls`), 'less')
    expectKeys(await keys(s, 'j'), 'less')
    expectPrompt(await keys(s, 'q'))
  })

  it('a program pausing 150 ms on the terminal as it leaves (vim does, for unanswered queries) is not waiting: the send ends on the prompt', async () => {
    const s = await session()
    const leaving = await stack.run(s, `python3 -c 'import select, sys; print("leaving", end="", flush=True); select.select([sys.stdin], [], [], 0.15)'`)
    expectPrompt(leaving)
    expect(leaving.viewport).toContain('leaving')
  })

  it('a menu on an event loop (epoll) with nothing on the cursor row: j j q picks the third item', async () => {
    const s = await session()
    expectKeys(await stack.run(s, `${TERM} node menu.js`), 'node')
    expectKeys(await keys(s, 'j'), 'node')
    expectKeys(await keys(s, 'j'), 'node')
    const picked = await keys(s, 'q')
    expectPrompt(picked)
    expect(picked.viewport).toContain('picked=gamma')
  })

  it('a Python curses menu: Down Down Enter picks the third item', async () => {
    const s = await session()
    expectKeys(await stack.run(s, `${TERM} python3 menu.py`), 'python3')
    expectKeys(await keys(s, DOWN), 'python3')
    expectKeys(await keys(s, DOWN), 'python3')
    const picked = await keys(s, '\r')
    expectPrompt(picked)
    expect(picked.viewport).toContain('picked=gamma')
  })
})
