import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TerminalSendResult, TerminalSessionId } from 'dsh-terminal'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from './support/stack'

// Named keys pressed into a real bash through the registry, as a model sends them. Each test asserts
// what the command printed (its own output line), not the echo of the edited line, so a key that
// did the wrong thing shows up as a different output.
let stack: Stack
let id: TerminalSessionId
let work: string

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'dsh-keys-'))
  writeFileSync(join(work, 'unique-completion-target.txt'), 'contents of the completed file\n')
  stack = await startStack()
  id = (await stack.open({ cwd: work })).sessionId
})
afterAll(async () => {
  await stack.dispose()
  rmSync(work, { recursive: true, force: true })
})

/** Press named keys (or type characters) in one send and wait for its result. */
const press = (...keys: string[]): Promise<TerminalSendResult> => stack.press(id, ...keys)

/** Type `text` without Enter. */
const type = (text: string) => stack.run(id, text, { submit: false })

/** The lines of a result's output. */
const linesOf = (result: TerminalSendResult) => result.viewport.split('\n')

describe('line editing in bash', () => {
  it('Up recalls the previous command and Enter runs it again', async () => {
    expect(linesOf(await stack.run(id, 'echo recalled-$((6*7))'))).toContain('recalled-42')
    await press('Up')
    const again = await press('Enter')
    expect(linesOf(again)).toContain('recalled-42')
    expect(again).toMatchObject({ waitReason: 'stdin_read', input: { kind: 'prompt' }, exitCode: 0 })
  })

  it('C-r searches the history backwards', async () => {
    await stack.run(id, 'echo needle-$((2+3))')
    await stack.run(id, 'echo haystack')
    await press('C-r', 'n', 'e', 'e', 'd')
    expect(linesOf(await press('Enter'))).toContain('needle-5')
  })

  it('Tab completes a unique file name', async () => {
    await type('cat unique-comp')
    await press('Tab')
    expect(linesOf(await press('Enter'))).toContain('contents of the completed file')
  })

  it('Left arrows move the cursor, so typing inserts mid-line', async () => {
    await type('echo held')
    await press('Left', 'Left', 'Left', 'Left', 'u', 'n')
    expect(linesOf(await press('Enter'))).toContain('unheld')
  })

  it('Home and End jump to the ends of the line', async () => {
    await type('cho ends')
    await press('Home', 'e', 'End', 'd')
    expect(linesOf(await press('Enter'))).toContain('endsd')
  })

  it('Backspace deletes before the cursor, Delete under it', async () => {
    await type('echo abcdef')
    await press('Left', 'Left', 'Left', 'Backspace', 'Delete')
    expect(linesOf(await press('Enter'))).toContain('abef')
  })

  it('M-b and M-f move by words', async () => {
    await type('echo alpha gamma')
    await press('M-b', 'b', 'e', 't', 'a', 'Space')
    expect(linesOf(await press('Enter'))).toContain('alpha beta gamma')
    await type('echo x y z')
    await press('Home', 'M-f', 'M-f', '1')
    expect(linesOf(await press('Enter'))).toContain('x1 y z')
  })

  it('C-c abandons the line: it never runs and the shell waits at a fresh prompt', async () => {
    await type('echo abandoned-line')
    const interrupted = await press('C-c')
    expect(interrupted).toMatchObject({ waitReason: 'stdin_read', input: { kind: 'prompt' } })
    const next = await stack.run(id, 'echo next-line')
    expect(linesOf(next)).toContain('next-line')
    expect(linesOf(interrupted)).not.toContain('abandoned-line')
    expect(linesOf(next)).not.toContain('abandoned-line')
  })
})

describe('the bytes a program reads', () => {
  it('arrive as xterm sends them, NUL and ESC included, through the whole stack', async () => {
    // A raw-mode reader (no line discipline in between) prints what it got, up to a final '.'.
    writeFileSync(
      join(work, 'raw-reader.py'),
      [
        'import os, termios, tty',
        'old = termios.tcgetattr(0)',
        'tty.setraw(0)',
        "got = b''",
        "while not got.endswith(b'.'):",
        '    got += os.read(0, 256)',
        'termios.tcsetattr(0, termios.TCSADRAIN, old)',
        "print('hex=' + got[:-1].hex())",
      ].join('\n'),
    )
    const waiting = await stack.run(id, 'python3 raw-reader.py')
    expect(waiting.waitReason).toBe('stdin_read')
    const read = await press('Up', 'F5', 'C-@', 'C-c', 'M-b', 'M-Up', 'Backspace', 'S-Tab', 'é', '.')
    expect(linesOf(read)).toContain(`hex=${['1b5b41', '1b5b31357e', '00', '03', '1b62', '1b5b313b3341', '7f', '1b5b5a', 'c3a9'].join('')}`)
  })
})

describe('application cursor keys', () => {
  it('a curses program (keypad on: the terminal in application cursor mode) reads arrows, Home and F1 by name', async () => {
    writeFileSync(
      join(work, 'curses-keys.py'),
      [
        'import curses',
        'def main(screen):',
        '    screen.keypad(True)',
        "    screen.addstr(0, 0, 'press keys, q ends')",
        '    screen.refresh()',
        '    names = []',
        "    while (key := screen.getch()) != ord('q'):",
        '        names.append(curses.keyname(key).decode())',
        '    return names',
        "print('keys=' + ','.join(curses.wrapper(main)))",
      ].join('\n'),
    )
    expect((await stack.run(id, 'python3 curses-keys.py')).waitReason).toBe('stdin_read')
    const read = await press('Down', 'Up', 'Left', 'Right', 'Home', 'End', 'F1', 'F12', 'q')
    expect(linesOf(read)).toContain('keys=KEY_DOWN,KEY_UP,KEY_LEFT,KEY_RIGHT,KEY_HOME,KEY_END,KEY_F(1),KEY_F(12)')
  })
})
