import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TerminalSessionId } from 'dsh-terminal'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { installed } from 'dsh-testkit'
import { PATIENT, type Stack, startStack } from './support/stack'
import { settled, tmux } from './support/tmux'

// The line view (scrollback and send viewports) of real interactive and full-screen programs,
// checked against what a terminal shows: tmux runs the same keys where a claim is about a terminal.
let stack: Stack
let id: TerminalSessionId
const work = mkdtempSync(join(tmpdir(), 'dsh-line-view-'))

beforeAll(async () => {
  stack = await startStack({ ...PATIENT, timeoutMs: 15_000 })
  id = (await stack.open({ name: 'lines', cwd: work })).sessionId
})

afterAll(async () => {
  await stack.dispose()
  rmSync(work, { recursive: true, force: true })
})

/** The scrollback from the line a send's output started on, as lines without trailing blanks. */
function historyFrom(firstLine: number | undefined): string[] {
  const page = stack.terminals.read(stack.agent, id, { fromLine: firstLine as number, count: 500 })
  return page.text.split('\n').map((line) => line.trimEnd())
}

/** Send keys that are not a command line (no Enter appended). */
function keys(text: string) {
  return stack.run(id, text, { submit: false })
}

describe('backspace and readline cursor moves', () => {
  it("keeps what backspace only moved over: printf 'abcdef\\b\\b\\b\\n' shows abcdef", async () => {
    const result = await stack.run(id, "printf 'abcdef\\b\\b\\b\\n'")
    expect(result.viewport.split('\n')).toEqual(["printf 'abcdef\\b\\b\\b\\n'", 'abcdef', 'dsh> '])
  })

  it('keeps the whole command line after five Left arrows and Enter (TERM=dumb readline echoes backspaces)', async () => {
    await keys('echo hello world')
    await keys('\x1b[D'.repeat(5))
    const result = await stack.run(id, '')
    expect(result.viewport.split('\n').slice(-2)).toEqual(['hello world', 'dsh> '])
    expect(historyFrom(result.firstLine).slice(0, 2)).toEqual(['dsh> echo hello world', 'hello world'])
  })

  it('renders readline edits in the middle of a line (xterm: CSI P deletes, CSI @ inserts)', async () => {
    await stack.run(id, 'export TERM=xterm-256color')
    try {
      await keys('echo hello world')
      await keys('\x1b[D'.repeat(5))
      await keys('\x7f\x7f')
      const deleted = await stack.run(id, '')
      expect(historyFrom(deleted.firstLine).slice(0, 2)).toEqual(['dsh> echo hellworld', 'hellworld'])
      await keys('echo ab cd')
      await keys('\x1b[D\x1b[D')
      await keys('X')
      const inserted = await stack.run(id, '')
      expect(historyFrom(inserted.firstLine).slice(0, 2)).toEqual(['dsh> echo ab Xcd', 'ab Xcd'])
      // Wide characters: readline moves over each with two columns' worth of cursor moves.
      await stack.run(id, 'export LC_ALL=C.UTF-8')
      await keys('echo 一二三 😀 end')
      await keys('\x1b[D'.repeat(6))
      await keys('X')
      const wide = await stack.run(id, '')
      expect(historyFrom(wide.firstLine).slice(0, 2)).toEqual(['dsh> echo 一二三X 😀 end', '一二三X 😀 end'])
    } finally {
      await stack.run(id, 'export TERM=dumb; unset LC_ALL')
    }
  })
})

describe('full-screen programs on the alternate screen', () => {
  it.skipIf(!installed('htop'))('leaves nothing of htop in the lines: the next prompt and command are clean', async () => {
    const started = await stack.run(id, 'TERM=xterm-256color htop', { timeoutMs: 3_000 })
    expect(started.viewport).toBe('TERM=xterm-256color htop\n')
    await keys('q')
    const after = await stack.run(id, 'echo rc=$?')
    expect(after.viewport).toBe('echo rc=$?\nrc=0\ndsh> ')
    expect(historyFrom(started.firstLine)).toEqual(['dsh> TERM=xterm-256color htop', 'dsh> echo rc=$?', 'rc=0', 'dsh>'])
  })

  it.skipIf(!installed('less'))('leaves nothing of less in the lines, as a terminal keeps none of it', async () => {
    const command = 'seq 1 500 | TERM=xterm-256color less'
    const started = await stack.run(id, command, { timeoutMs: 3_000 })
    await keys('/250\r')
    await keys('q')
    const after = await stack.run(id, 'echo done')
    expect(after.viewport).toBe('echo done\ndone\ndsh> ')
    const lines = historyFrom(started.firstLine)
    expect(lines).toEqual([`dsh> ${command}`, 'dsh> echo done', 'done', 'dsh>'])
    if (installed('tmux')) expect(lines).toEqual(inTmux([command, '/250\r', 'q', 'echo done\r']))
  })
})

describe('pagers without the alternate screen', () => {
  it.skipIf(!installed('less') || !installed('tmux'))('holds what a dumb terminal shows of TERM=dumb less, /250 and q', async () => {
    const command = 'seq 1 500 | TERM=dumb less'
    const started = await stack.run(id, command, { timeoutMs: 3_000 })
    await keys('\r')
    await keys('/250\r')
    await keys('q')
    await stack.run(id, 'echo done')
    const lines = historyFrom(started.firstLine)
    expect(lines).toContain('250')
    expect(lines).toEqual(inTmux([command, '\r', '/250\r', 'q', 'echo done\r']))
  })
})

describe('pagers that repaint on the normal screen', () => {
  it.skipIf(!installed('less') || !installed('tmux'))('holds what a terminal holds of less -X, /250 and q: no repeated page', async () => {
    const command = 'seq 1 500 | TERM=xterm-256color less -X'
    const started = await stack.run(id, "printf '\\033[H\\033[2J'")
    await stack.run(id, command, { timeoutMs: 3_000 })
    await keys('/250\r')
    await keys('q')
    await stack.run(id, 'echo done')
    const lines = historyFrom(started.firstLine)
    const page = lines.indexOf('1')
    expect(lines.slice(page, page + 3)).toEqual(['1', '2', '3'])
    expect(lines.filter((line) => line === '1')).toHaveLength(1)
    expect(lines.slice(lines.indexOf(`dsh> ${command}`))).toEqual(inTmux([command, '/250\r', 'q', 'echo done\r']))
  })
})

/**
 * What tmux's history and screen hold after a fresh `bash` with the same prompt took `inputs`
 * (the first one a command line), from that command line on; each input is sent once the pane
 * stopped changing, so a program has drawn before its next key arrives.
 */
function inTmux(inputs: readonly string[]): string[] {
  const name = `dsh-line-view-${process.pid}`
  const shell = `env -i PATH="$PATH" HOME="${work}" PS1='dsh> ' bash --norc --noprofile -i`
  tmux('new-session', '-d', '-s', name, '-x', '160', '-y', '40', '-c', work, shell)
  try {
    let screen = settled(() => tmux('capture-pane', '-p', '-t', name, '-S', '-'))
    for (const [index, input] of inputs.entries()) {
      tmux('send-keys', '-t', name, '-l', index === 0 ? `${input}\r` : input)
      screen = settled(() => tmux('capture-pane', '-p', '-t', name, '-S', '-'), screen)
    }
    const lines = screen.split('\n').map((line) => line.trimEnd())
    while (lines.length > 0 && lines.at(-1) === '') lines.pop()
    return lines.slice(lines.indexOf(`dsh> ${inputs[0]}`))
  } finally {
    tmux('kill-session', '-t', name)
  }
}
