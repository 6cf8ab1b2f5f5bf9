import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TerminalSendResult, TerminalSessionId } from 'dsh-terminal'
import { installed } from 'dsh-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_KEY_MODES, type KeyModes, sendInput } from '../src/input/send-input'
import { startStack, type Stack } from './support/stack'

// A block that only runs as written when it arrives as one paste: a blank line inside an indented
// body ends the block when typed (the REPL reads the blank line as "done"), and Python 3.13's REPL
// adds its own indentation to every typed line after a colon.
const BLOCK = 'def f():\n    a = 1\n\n    return a + 1\n\nprint("result", f())'

/** Modes of a program that asked for bracketed paste, as the screen model reports them. */
const PASTING: KeyModes = { ...DEFAULT_KEY_MODES, bracketedPaste: true }

/**
 * A Python whose REPL enables bracketed paste (3.13's; 3.11 and 3.12 turn readline's off), found on
 * PATH or among pyenv's versions, or undefined where none is installed.
 */
function pastingPython(): string | undefined {
  const find =
    'for p in "$(command -v python3.14)" "$(command -v python3.13)" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.1[3-9]*/bin/python3; do ' +
    '[ -x "$p" ] && "$p" -c "import _pyrepl" 2>/dev/null && { echo "$p"; exit 0; }; done; exit 1'
  try {
    return execFileSync('sh', ['-c', find], { encoding: 'utf8' }).trim() || undefined
  } catch {
    return undefined
  }
}

const python = pastingPython()

/** `python3` when its REPL is the classic readline one (before 3.13), which turns bracketed paste off. */
const classicPython = installedClassicPython()

function installedClassicPython(): string | undefined {
  try {
    const version = execFileSync('python3', ['-c', 'import sys; print(sys.version_info[1])'], { encoding: 'utf8' })
    return Number(version) < 13 ? 'python3' : undefined
  } catch {
    return undefined
  }
}

let stack: Stack
let work: string

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'dsh-paste-'))
  stack = await startStack()
})
afterAll(async () => {
  await stack.dispose()
  rmSync(work, { recursive: true, force: true })
})

/** The lines of a result's output. */
const linesOf = (result: TerminalSendResult) => result.viewport.split('\n')

/** A new session running `interpreter`'s REPL. */
async function openPython(interpreter: string): Promise<TerminalSessionId> {
  const id = (await stack.open({ cwd: work })).sessionId
  const started = await stack.run(id, `${interpreter} -q`)
  expect(started.waitReason).toBe('stdin_read')
  return id
}

describe.skipIf(python === undefined)("Python 3.13's REPL (asks for bracketed paste)", () => {
  it('typed line by line, the block does not run as written', async () => {
    const id = await openPython(python as string)
    let printed = ''
    // One line per send: a single line is always typed, whatever the modes.
    for (const line of BLOCK.split('\n')) printed += (await stack.run(id, line)).viewport
    expect(printed).toContain('IndentationError')
    expect(printed).not.toContain('result 2')
  })

  it('the bytes sendInput writes for a program that asked for pastes run it as written', async () => {
    const id = await openPython(python as string)
    const paste = sendInput({ text: BLOCK, submit: true }, PASTING) as string
    const result = await stack.run(id, paste, { submit: false })
    expect(linesOf(result)).toContain('result 2')
    expect(result.viewport).not.toContain('Error')
  })

  it('sent as text with submit, the session pastes it (live modes) and it runs as written', async () => {
    const id = await openPython(python as string)
    const result = await stack.run(id, BLOCK)
    expect(linesOf(result)).toContain('result 2')
    expect(result.viewport).not.toContain('Error')
    // The REPL is back at its prompt, ready for the next statement.
    expect(linesOf(await stack.run(id, 'print("next", f() * 10)'))).toContain('next 20')
  })
})

describe.skipIf(classicPython === undefined)("Python's classic REPL (3.12 and older: asks for no paste)", () => {
  it('gets the block typed, as before: a paste would be compiled as one statement', async () => {
    const id = await openPython(classicPython as string)
    const result = await stack.run(id, BLOCK)
    expect(result.viewport).toContain('IndentationError')
    expect(result.viewport).not.toContain('multiple statements')
  })
})

describe('bash (asks for bracketed paste at its prompt)', () => {
  /** A heredoc whose body starts with a tab; `cat -A` shows a kept tab as ^I. */
  const HEREDOC = "cat -A <<'EOF'\n\tkept-tab\nEOF"

  it('typed line by line, a tab is taken by completion and lost', async () => {
    const id = (await stack.open({ cwd: work })).sessionId
    let printed = ''
    for (const line of HEREDOC.split('\n')) printed += (await stack.run(id, line)).viewport
    expect(printed).toContain('kept-tab$')
    expect(printed).not.toContain('^Ikept-tab$')
  })

  it('sent as text, it is pasted and the tab arrives', async () => {
    const id = (await stack.open({ cwd: work })).sessionId
    const result = await stack.run(id, HEREDOC)
    expect(linesOf(result)).toContain('^Ikept-tab$')
    expect(result).toMatchObject({ waitReason: 'stdin_read', input: { kind: 'prompt' }, exitCode: 0 })
  })

  it('a paste end inside the text cannot end the paste and have the rest typed', async () => {
    const id = (await stack.open({ cwd: work })).sessionId
    const result = await stack.run(id, `cat -A <<'EOF'\n\tinside\x1b[201~\tafter-marker\nEOF`)
    // Typed, the second tab would be lost to completion; pasted whole, both arrive.
    expect(linesOf(result)).toContain('^Iinside^Iafter-marker$')
    expect(result.viewport).not.toContain('201~')
  })
})

describe.skipIf(!installed('nano'))('nano (an editor on the alternate screen that asks for bracketed paste)', () => {
  it('a text ending in a line break is pasted with its own line breaks only: no empty line is added', async () => {
    const id = (await stack.open({ cwd: work })).sessionId
    const opened = await stack.run(id, 'TERM=xterm-256color nano -R pasted.txt')
    expect(opened.input).toMatchObject({ kind: 'keys' })
    // Typed by hand this is two lines; the tab makes the session paste it.
    await stack.run(id, 'one\ttwo\nthree\n')
    await stack.run(id, '\u000f', { submit: false })
    await stack.run(id, '\r', { submit: false })
    expect(await stack.run(id, '\u0018', { submit: false })).toMatchObject({ input: { kind: 'prompt' } })
    expect(readFileSync(join(work, 'pasted.txt'), 'utf8')).toBe('one\ttwo\nthree\n')
  })
})
