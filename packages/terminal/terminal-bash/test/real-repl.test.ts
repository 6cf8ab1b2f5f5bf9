import type { TerminalSessionId } from 'dsh-terminal'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { installed } from 'dsh-testkit'
import { startStack, type Stack } from './support/stack'

// Programs that wait for input without the shell's marker must settle as exact stdin_read.
let stack: Stack
let id: TerminalSessionId

beforeAll(async () => {
  stack = await startStack()
  id = (await stack.open()).sessionId
})
afterAll(async () => {
  await stack.dispose()
})

describe('REPL readiness (exact stdin tier)', () => {
  it('python3', async () => {
    expect(await stack.run(id, 'python3 -q')).toMatchObject({ waitReason: 'stdin_read' })
    const sum = await stack.run(id, '1+1')
    expect(sum).toEqual({
      viewport: '1+1\n2\n>>> ',
      waitReason: 'stdin_read',
      sessionStatus: { kind: 'running' },
      truncated: false,
      firstLine: expect.any(Number),
      input: { kind: 'program', program: expect.objectContaining({ name: 'python3', pid: expect.any(Number) }) },
    })
    // The viewport's lines are scrollback lines from firstLine on; the first one after the prompt it was typed on.
    expect(stack.terminals.read(stack.agent, id, { fromLine: sum.firstLine as number, count: 3 }).text).toBe('>>> 1+1\n2\n>>> ')
    expect((await stack.run(id, 'import time; time.sleep(1); print("slept")')).viewport).toContain('slept\n>>> ')
    expect(await stack.run(id, 'exit()')).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 })
  })

  it('node', async () => {
    expect(await stack.run(id, 'node')).toMatchObject({ waitReason: 'stdin_read' })
    const result = await stack.run(id, '6*7')
    expect(result.waitReason).toBe('stdin_read')
    expect(result.viewport).toContain('42')
    expect(await stack.run(id, '.exit')).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 })
  })

  it.skipIf(!installed('gdb'))('gdb', async () => {
    expect(await stack.run(id, 'gdb -q -nx')).toMatchObject({ viewport: expect.stringContaining('(gdb) '), waitReason: 'stdin_read' })
    expect(await stack.run(id, 'print 6*7')).toMatchObject({ viewport: expect.stringContaining('$1 = 42'), waitReason: 'stdin_read' })
    expect(await stack.run(id, 'quit')).toMatchObject({ waitReason: 'stdin_read' })
  })

  it.skipIf(!installed('bc'))('bc', async () => {
    expect(await stack.run(id, 'bc -q')).toMatchObject({ waitReason: 'stdin_read' })
    expect(await stack.run(id, '6*7')).toMatchObject({ viewport: '6*7\n42\n', waitReason: 'stdin_read' })
    expect(await stack.run(id, 'quit')).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 })
  })

  it.skipIf(!installed('sqlite3'))('sqlite3', async () => {
    expect(await stack.run(id, 'sqlite3')).toMatchObject({ waitReason: 'stdin_read' })
    expect(await stack.run(id, 'select 6*7;')).toMatchObject({ viewport: expect.stringContaining('42'), waitReason: 'stdin_read' })
    expect(await stack.run(id, '.quit')).toMatchObject({ waitReason: 'stdin_read' })
  })

  it('cat, read -p and a password prompt (read -s)', async () => {
    expect(await stack.run(id, 'cat')).toMatchObject({ viewport: 'cat\n', waitReason: 'stdin_read' })
    expect(await stack.run(id, 'echoed')).toMatchObject({ viewport: 'echoed\nechoed\n', waitReason: 'stdin_read' })
    expect((await stack.run(id, '\x04', { submit: false })).viewport.endsWith('dsh> ')).toBe(true)
    expect(await stack.run(id, 'read -p "name? " name')).toMatchObject({ viewport: 'read -p "name? " name\nname? ', waitReason: 'stdin_read' })
    expect(await stack.run(id, 'ada')).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 })
    expect(await stack.run(id, 'read -s -p "password: " pw')).toMatchObject({ viewport: 'read -s -p "password: " pw\npassword: ', waitReason: 'stdin_read' })
    const secret = await stack.run(id, 'hunter2')
    expect(secret).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 })
    expect(secret.viewport).not.toContain('hunter2')
    expect((await stack.run(id, 'echo "${#pw} $name"')).viewport).toContain('7 ada')
  })
})
