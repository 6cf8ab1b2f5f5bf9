import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TerminalSessionId } from 'dsh-terminal'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from './support/stack'

// Python's prompts carry the session's REPL marker (PYTHONSTARTUP): a round trip settles on it,
// `exit()` settles on the shell's marker, and the user's own startup file still runs first.
let stack: Stack
let id: TerminalSessionId
let work: string
const previousStartup = process.env.PYTHONSTARTUP

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'dsh-python-'))
  const userStartup = join(work, 'user-startup.py')
  writeFileSync(userStartup, 'USER_STARTUP_RAN = "yes"\nimport sys\nsys.ps1 = "py> "\n')
  // The host's PYTHONSTARTUP is read when a session starts; restore it right after.
  process.env.PYTHONSTARTUP = userStartup
  stack = await startStack()
  try {
    id = (await stack.open({ cwd: work })).sessionId
  } finally {
    if (previousStartup === undefined) delete process.env.PYTHONSTARTUP
    else process.env.PYTHONSTARTUP = previousStartup
  }
})
afterAll(async () => {
  await stack.dispose()
  rmSync(work, { recursive: true, force: true })
})

describe('the Python REPL marker', () => {
  it('marks the prompt the user startup file set, after running it', async () => {
    const started = await stack.run(id, 'python3 -q')
    expect(started).toMatchObject({ waitReason: 'stdin_read', viewport: 'python3 -q\npy> ', input: { kind: 'program', program: { name: 'python3' } } })
    const result = await stack.run(id, 'print(USER_STARTUP_RAN, 6*7)')
    expect(result).toMatchObject({ viewport: 'print(USER_STARTUP_RAN, 6*7)\nyes 42\npy> ', waitReason: 'stdin_read' })
    expect(result.exitCode).toBeUndefined()
  })

  it('settles a block on the continuation prompt and on the prompt after it', async () => {
    expect(await stack.run(id, 'for i in range(2):')).toMatchObject({ viewport: 'for i in range(2):\n... ', waitReason: 'stdin_read' })
    expect(await stack.run(id, '  print("row", i)')).toMatchObject({ viewport: '  print("row", i)\n... ' })
    expect(await stack.run(id, '')).toMatchObject({ viewport: '\nrow 0\nrow 1\npy> ' })
  })

  it('programs the REPL starts inherit neither the marker nor the marking startup file', async () => {
    const result = await stack.run(
      id,
      'import os; print([os.environ.get(k) for k in ("DSH_PYTHON_MARKER", "DSH_USER_PYTHONSTARTUP")], os.environ.get("PYTHONSTARTUP", "").endswith("user-startup.py"))',
    )
    expect(result.viewport).toContain('[None, None] True')
  })

  it('a long computation is not settled by the prompt it will print later', async () => {
    const result = await stack.run(id, 'import time; time.sleep(0.5); print("slept")')
    expect(result).toMatchObject({ waitReason: 'stdin_read', viewport: expect.stringMatching(/slept\npy> $/) })
  })

  it('exit() settles on the shell prompt with the exit status', async () => {
    expect(await stack.run(id, 'exit()')).toMatchObject({ waitReason: 'stdin_read', exitCode: 0, input: { kind: 'prompt' } })
    expect(await stack.run(id, 'python3 -q -c "raise SystemExit(3)"')).toMatchObject({ exitCode: 3, input: { kind: 'prompt' } })
  })
})
