import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TerminalSendResult, TerminalSessionId } from 'dsh-terminal'
import { installed } from 'dsh-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from './support/stack'
import { settled, tmux } from './support/tmux'

// The screen a session shows must be the command line bash edits: both count 🚀 ⚡ ✅ as two
// columns (Unicode 11, as bash, tmux and ncurses do), so readline's cursor moves land on the same
// character on the screen as in bash's buffer. tmux, running the same keys, is the reference.
let stack: Stack
let id: TerminalSessionId
const work = mkdtempSync(join(tmpdir(), 'dsh-screen-widths-'))
const COMMAND = 'echo 🚀⚡✅ tail'
/** Home, then seven Rights: past `echo `, 🚀 and ⚡, so the cursor sits on ✅. */
const MOVES = ['Home', ...Array.from({ length: 7 }, () => 'Right')]

beforeAll(async () => {
  stack = await startStack()
  id = (await stack.open({ cwd: work })).sessionId
  // readline counts columns per character only in a UTF-8 locale, and moves the cursor with xterm's sequences.
  await stack.run(id, 'export TERM=xterm-256color LC_ALL=C.UTF-8')
})

afterAll(async () => {
  await stack.dispose()
  rmSync(work, { recursive: true, force: true })
})

/** Press named keys (or type characters) in one send and wait for its result. */
const press = (...keys: string[]): Promise<TerminalSendResult> => stack.press(id, ...keys)

/** The session's screen rows, trailing blanks dropped, from the last one that starts with `prefix` on. */
async function rowsFrom(prefix: string): Promise<string[]> {
  const lines = ((await stack.terminals.screen(stack.agent, id))?.lines ?? []).map((line) => line.trimEnd())
  return fromLast(lines, prefix)
}

/** `lines` from the last one that starts with `prefix` on (all of them when none does), blank ones dropped. */
function fromLast(lines: string[], prefix: string): string[] {
  let at = lines.length - 1
  while (at >= 0 && !(lines[at] as string).startsWith(prefix)) at--
  return lines.slice(Math.max(at, 0)).filter((line) => line !== '')
}

describe('emoji on the screen take the two columns bash gives them', () => {
  it('shows the edited command line that bash runs (echo 🚀⚡✅ tail, Home, seven Rights, Y)', async () => {
    await stack.run(id, COMMAND, { submit: false })
    await press(...MOVES, 'Y')
    expect(await rowsFrom('dsh> echo')).toEqual(['dsh> echo 🚀⚡Y✅ tail'])
    const ran = await press('Enter')
    expect(ran.viewport.split('\n')).toContain('🚀⚡Y✅ tail')
    expect(await rowsFrom('dsh> echo')).toEqual(['dsh> echo 🚀⚡Y✅ tail', '🚀⚡Y✅ tail', 'dsh>'])
  })

  it.skipIf(!installed('tmux'))('shows what tmux shows for the same keys', async () => {
    await stack.run(id, COMMAND, { submit: false })
    await press(...MOVES, 'Y', 'Enter')
    expect(await rowsFrom('dsh> echo')).toEqual(inTmux(['-l', COMMAND], [...MOVES, 'Y', 'Enter']))
  })
})

/** The rows tmux shows from the command line on, after each group of `send-keys` arguments, run by bash as the session runs it. */
function inTmux(...groups: string[][]): string[] {
  const name = `dsh-screen-widths-${process.pid}`
  const shell = `env -i PATH="$PATH" HOME="${work}" TERM=xterm-256color LC_ALL=C.UTF-8 PS1='dsh> ' bash --norc --noprofile -i`
  tmux('new-session', '-d', '-s', name, '-x', '160', '-y', '40', '-c', work, shell)
  try {
    let screen = settled(() => tmux('capture-pane', '-p', '-t', name))
    for (const keys of groups) {
      tmux('send-keys', '-t', name, ...keys)
      screen = settled(() => tmux('capture-pane', '-p', '-t', name), screen)
    }
    const lines = screen.split('\n').map((line) => line.trimEnd())
    return fromLast(lines, 'dsh> echo')
  } finally {
    tmux('kill-session', '-t', name)
  }
}
