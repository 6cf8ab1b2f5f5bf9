import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TerminalSessionId } from 'dsh-terminal'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { installed } from 'dsh-testkit'
import { startStack, type Stack } from './support/stack'

// Why a session waits, told by real programs: each settles as stdin_read with the input state
// (and the program's name) that says what to type next.
let stack: Stack
let id: TerminalSessionId
let work: string

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'dsh-input-'))
  stack = await startStack()
  id = (await stack.open({ cwd: work })).sessionId
})
afterAll(async () => {
  await stack.dispose()
  rmSync(work, { recursive: true, force: true })
})

/** The program part of an input state, by name. */
const named = (name: string) => ({ program: expect.objectContaining({ name, pid: expect.any(Number) }) })

describe('the shell itself', () => {
  it('prompt after a command', async () => {
    expect(await stack.run(id, 'true')).toMatchObject({ waitReason: 'stdin_read', input: { kind: 'prompt' } })
  })

  it('continuation for an unclosed quote, then the prompt once the rest is sent', async () => {
    const open = await stack.run(id, 'echo "first')
    expect(open).toMatchObject({ waitReason: 'stdin_read', input: { kind: 'continuation' }, viewport: 'echo "first\n> ' })
    expect(open.exitCode).toBeUndefined()
    const closed = await stack.run(id, 'second"')
    expect(closed).toMatchObject({ waitReason: 'stdin_read', input: { kind: 'prompt' }, exitCode: 0 })
    expect(closed.viewport).toContain('first\nsecond\n')
  })

  it('continuation for every line of a heredoc', async () => {
    expect(await stack.run(id, 'cat <<EOF')).toMatchObject({ input: { kind: 'continuation' } })
    expect(await stack.run(id, 'body line')).toMatchObject({ input: { kind: 'continuation' } })
    const ended = await stack.run(id, 'EOF')
    expect(ended).toMatchObject({ input: { kind: 'prompt' }, exitCode: 0 })
    expect(ended.viewport).toContain('body line\n')
  })

  it('continuation of an open if, abandoned with Ctrl-C', async () => {
    expect(await stack.run(id, 'if true; then')).toMatchObject({ input: { kind: 'continuation' } })
    expect(await stack.run(id, '\x03', { submit: false })).toMatchObject({ input: { kind: 'prompt' } })
  })

  it('the same state from a fresh look (what terminal_read and terminal_list show)', async () => {
    expect(await stack.terminals.inputState(stack.agent, id)).toEqual({ kind: 'prompt' })
    await stack.run(id, 'echo "open')
    expect(await stack.terminals.inputState(stack.agent, id)).toEqual({ kind: 'continuation' })
    await stack.run(id, '"')
  })
})

describe('programs reading a line', () => {
  it('read -p with a [y/N] question is a program (the shell reading a line)', async () => {
    const asked = await stack.run(id, 'read -p "Continue? [y/N] " answer')
    expect(asked).toMatchObject({ waitReason: 'stdin_read', input: { kind: 'program', ...named('bash') } })
    expect(await stack.run(id, 'y')).toMatchObject({ input: { kind: 'prompt' }, exitCode: 0 })
  })

  it('read -s is a password', async () => {
    expect(await stack.run(id, 'read -s -p "token: " token')).toMatchObject({ input: { kind: 'password', ...named('bash') } })
    expect(await stack.run(id, 'not-a-real-secret')).toMatchObject({ input: { kind: 'prompt' } })
    expect(await stack.terminals.inputState(stack.agent, id)).toEqual({ kind: 'prompt' })
  })

  it("Python's getpass is a password of python3", async () => {
    const asked = await stack.run(id, 'python3 -c \'import getpass; getpass.getpass("Secret: ")\'')
    expect(asked).toMatchObject({ waitReason: 'stdin_read', input: { kind: 'password', ...named('python3') } })
    // A fresh look says the same while it still waits.
    expect(await stack.terminals.inputState(stack.agent, id)).toMatchObject({ kind: 'password', ...named('python3') })
    expect(await stack.run(id, 'x')).toMatchObject({ input: { kind: 'prompt' }, exitCode: 0 })
  })

  it.skipIf(!installed('ssh-keygen'))('ssh-keygen asking for a passphrase is a password', async () => {
    const asked = await stack.run(id, `ssh-keygen -q -t ed25519 -f ${join(work, 'key')}`)
    expect(asked).toMatchObject({ waitReason: 'stdin_read', input: { kind: 'password', ...named('ssh-keygen') } })
    expect(asked.viewport).toMatch(/passphrase/i)
    expect(await stack.run(id, '')).toMatchObject({ input: { kind: 'password', ...named('ssh-keygen') } })
    expect(await stack.run(id, '')).toMatchObject({ input: { kind: 'prompt' }, exitCode: 0 })
  })

  it('python3 is a program by name', async () => {
    expect(await stack.run(id, 'python3 -q')).toMatchObject({ input: { kind: 'program', ...named('python3') } })
    expect(await stack.run(id, 'exit()')).toMatchObject({ input: { kind: 'prompt' } })
  })

  it('node is a program by name', async () => {
    expect(await stack.run(id, 'node')).toMatchObject({ input: { kind: 'program', ...named('node') } })
    expect(await stack.run(id, '.exit')).toMatchObject({ input: { kind: 'prompt' } })
  })

  it.skipIf(!installed('gdb'))('gdb is a program by name', async () => {
    expect(await stack.run(id, 'gdb -q -nx')).toMatchObject({ input: { kind: 'program', ...named('gdb') } })
    expect(await stack.run(id, 'quit')).toMatchObject({ input: { kind: 'prompt' } })
  })
})

describe('programs reading keys', () => {
  it('read -n1 reads one key', async () => {
    expect(await stack.run(id, 'read -n1 -p "any key " key')).toMatchObject({ input: { kind: 'keys', alternateScreen: false, ...named('bash') } })
    expect(await stack.run(id, 'x', { submit: false })).toMatchObject({ input: { kind: 'prompt' } })
  })

  it.skipIf(!installed('less'))('less', async () => {
    const paged = await stack.run(id, 'seq 500 | less')
    expect(paged).toMatchObject({ waitReason: 'stdin_read', input: { kind: 'keys', ...named('less') } })
    expect(await stack.run(id, 'q', { submit: false })).toMatchObject({ input: { kind: 'prompt' } })
  })

  it.skipIf(!installed('vim'))('vim', async () => {
    const edited = await stack.run(id, 'vim -u NONE -N notes.txt')
    expect(edited).toMatchObject({ waitReason: 'stdin_read', input: { kind: 'keys', ...named('vim') } })
    expect(await stack.run(id, '\x1b:q!\r', { submit: false })).toMatchObject({ input: { kind: 'prompt' } })
  })
})

describe('nothing waiting for input', () => {
  it('sleep is shown as busy and not reading the terminal', async () => {
    const result = await stack.run(id, 'sleep 30', { idleMs: 300 })
    expect(result).toMatchObject({ waitReason: 'inferred_idle', input: { kind: 'busy', reading: 'no', ...named('sleep') } })
    const busy = result.input as { program: { elapsedMs?: number } }
    expect(busy.program.elapsedMs).toEqual(expect.any(Number))
    expect(await stack.terminals.inputState(stack.agent, id)).toMatchObject({ kind: 'busy', reading: 'no', ...named('sleep') })
    expect(await stack.run(id, '\x03', { submit: false })).toMatchObject({ input: { kind: 'prompt' } })
  })
})

describe('while a send’s input has not been taken up', () => {
  it('is busy, never the wait the program showed before the input reached it', async () => {
    expect(await stack.run(id, 'read -s -p "secret: " hidden')).toMatchObject({ input: { kind: 'password' } })
    // Typed without Enter and not echoed: `read` keeps waiting and nothing is printed, so only the
    // send knows the terminal holds input nobody answered yet.
    const send = stack.send(id, 'not-yet', { submit: false })
    expect(await stack.terminals.inputState(stack.agent, id)).toMatchObject({ kind: 'busy', ...named('bash') })
    expect(await send.done).toMatchObject({ input: { kind: 'password' } })
    await send.released
    expect(await stack.terminals.inputState(stack.agent, id)).toMatchObject({ kind: 'password' })
    expect(await stack.run(id, '')).toMatchObject({ input: { kind: 'prompt' } })
  })
})
