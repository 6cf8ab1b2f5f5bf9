import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TerminalTextSend, TerminalSendResult, TerminalSessionId, TerminalSize } from 'dsh-terminal'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { installed } from 'dsh-testkit'
import { startStack, type Stack } from './support/stack'

// Real bash in a real PTY: a size at open and a send that resizes reach the PTY (SIGWINCH) and the screen.
let stack: Stack
let id: TerminalSessionId
const work = mkdtempSync(join(tmpdir(), 'dsh-screen-resize-'))

beforeAll(async () => {
  stack = await startStack()
  id = (await stack.terminals.spawn(stack.agent, { type: 'shell', cwd: work, size: { rows: 30, cols: 100 } })).sessionId
})

afterAll(async () => {
  await stack.dispose()
  rmSync(work, { recursive: true, force: true })
})

async function send(request: Omit<TerminalTextSend, 'submit'> & { submit?: boolean }): Promise<TerminalSendResult> {
  const handle = stack.terminals.startSend(stack.agent, id, { submit: true, ...request })
  const result = await handle.done
  await handle.released
  return result
}

function sizeOfSession(): TerminalSize | undefined {
  return stack.terminals.list(stack.agent).find((session) => session.sessionId === id)?.size
}

describe('window size', () => {
  it('starts with the size asked for at open', async () => {
    expect((await send({ text: 'stty size' })).viewport).toBe('stty size\n30 100\ndsh> ')
    expect(sizeOfSession()).toEqual({ rows: 30, cols: 100 })
    expect((await stack.terminals.screen(stack.agent, id))?.size).toEqual({ rows: 30, cols: 100 })
  })

  it('resizes before the text of the same send is written', async () => {
    const result = await send({ text: 'stty size', size: { rows: 25, cols: 90 } })
    expect(result.viewport).toBe('stty size\n25 90\ndsh> ')
    expect(sizeOfSession()).toEqual({ rows: 25, cols: 90 })
    expect((await stack.terminals.screen(stack.agent, id))?.size).toEqual({ rows: 25, cols: 90 })
  })

  it('a send that only resizes settles on the shell waiting again, not on silence', async () => {
    const result = await send({ text: '', submit: false, size: { rows: 24, cols: 80 } })
    expect(result).toMatchObject({ waitReason: 'stdin_read', input: { kind: 'prompt' } })
    expect((await send({ text: 'stty size' })).viewport).toBe('stty size\n24 80\ndsh> ')
  })
})

describe.skipIf(!installed('python3'))('a running full-screen program', () => {
  it('redraws for the new size, and the send that resized returns that screen', async () => {
    const script = join(work, 'size.py')
    writeFileSync(
      script,
      [
        'import curses',
        'def main(screen):',
        '    while True:',
        '        rows, cols = screen.getmaxyx()',
        '        screen.erase()',
        '        screen.addstr(0, 0, f"size {rows}x{cols}")',
        '        screen.refresh()',
        '        if screen.getch() == ord("q"):',
        '            break',
        'curses.wrapper(main)',
        '',
      ].join('\n'),
    )
    const started = await send({ text: `python3 ${script}`, size: { rows: 24, cols: 80 } })
    expect(started).toMatchObject({ waitReason: 'stdin_read', input: { kind: 'keys', alternateScreen: true } })
    expect(started.screen).toMatchObject({ lines: ['size 24x80'], size: { rows: 24, cols: 80 }, alternateScreen: true })

    const resized = await send({ text: '', submit: false, size: { rows: 20, cols: 70 } })
    expect(resized).toMatchObject({ waitReason: 'stdin_read', input: { kind: 'keys' } })
    expect(resized.screen).toMatchObject({ lines: ['size 20x70'], size: { rows: 20, cols: 70 }, alternateScreen: true })

    const quit = await send({ text: 'q', submit: false })
    expect(quit).toMatchObject({ waitReason: 'stdin_read', exitCode: 0, input: { kind: 'prompt' } })
    expect(quit.screen).toBeUndefined()
    expect((await send({ text: 'stty size' })).viewport).toBe('stty size\n20 70\ndsh> ')
  })
})

describe.skipIf(!installed('less'))('the line view at the session size', () => {
  it('counts screen rows of the size the session opened with (less -X redraws in place, nothing repeats)', async () => {
    const small = (await stack.terminals.spawn(stack.agent, { type: 'shell', cwd: work, size: { rows: 10, cols: 80 } })).sessionId
    const run = async (text: string, submit: boolean) => {
      const handle = stack.terminals.startSend(stack.agent, small, { text, submit })
      const result = await handle.done
      await handle.released
      return result
    }
    expect(await run('seq 1 200 | less -X', true)).toMatchObject({ waitReason: 'stdin_read', input: { kind: 'keys' } })
    const searched = await run('/150\r', false)
    expect(searched.viewport).toBe(['...skipping...', ...Array.from({ length: 9 }, (_, index) => String(150 + index)), ':'].join('\n'))
    expect(await run('q', false)).toMatchObject({ waitReason: 'stdin_read', input: { kind: 'prompt' } })
  })
})
