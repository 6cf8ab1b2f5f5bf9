import type { TerminalSessionId } from 'dsh-terminal'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PATIENT, startStack, type Stack } from './support/stack'

// A send while an earlier command still runs (the previous send came back on the caller's idleMs):
// the input waits in the terminal until the shell's next prompt. What the earlier command printed up
// to that prompt is shown as earlier output, the send's own output starts on the prompt's line, and
// the exit status is never the earlier command's.
let stack: Stack
let id: TerminalSessionId

beforeAll(async () => {
  stack = await startStack({ ...PATIENT, idleSilenceMs: 300 })
  id = (await stack.open()).sessionId
})

afterAll(async () => {
  await stack.dispose()
})

/** Start `command` and come back while it still runs (the caller's own silence bound). */
async function leaveRunning(command: string): Promise<void> {
  const left = await stack.run(id, command, { idleMs: 200 })
  expect(left).toMatchObject({ waitReason: 'inferred_idle', input: { kind: 'busy', reading: 'no' } })
}

describe('input typed ahead of a running command', () => {
  it('labels what the running command printed as earlier output, and reports the new command alone', async () => {
    await leaveRunning('sleep 1; echo OLD-OUTPUT; false')
    const result = await stack.run(id, 'echo NEW-OUTPUT')
    expect(result).toMatchObject({ waitReason: 'stdin_read', exitCode: 0, input: { kind: 'prompt' } })
    expect(result.earlierOutput).toContain('OLD-OUTPUT')
    expect(result.viewport).not.toContain('OLD-OUTPUT')
    expect(result.viewport).toMatch(/^dsh> echo NEW-OUTPUT\nNEW-OUTPUT\ndsh> $/)
    // Both parts keep their place in the scrollback: a read of the earlier part's first line shows it.
    const read = stack.terminals.read(stack.agent, id, { fromLine: result.earlierFirstLine as number, count: 3 })
    expect(read.text).toContain('OLD-OUTPUT')
  })

  it('never reports the earlier command’s exit status for a command that has not ended', async () => {
    await leaveRunning('sleep 1; echo OLD-FAILED; false')
    const result = await stack.run(id, 'sleep 30', { timeoutMs: 2500 })
    expect(result).toMatchObject({ waitReason: 'timeout', input: { kind: 'busy' } })
    expect(result.earlierOutput).toContain('OLD-FAILED')
    expect(result.exitCode).toBeUndefined()
    expect(await stack.run(id, '\x03', { submit: false })).toMatchObject({ input: { kind: 'prompt' } })
  })

  it('matches waitFor only in the new command’s output', async () => {
    await leaveRunning('sleep 1; echo READY-OLD')
    const result = await stack.run(id, 'echo READY-NEW', { waitFor: 'READY-\\w+' })
    expect(result).toMatchObject({ waitReason: 'output_match', match: { text: 'READY-NEW' } })
    expect(result.earlierOutput).toContain('READY-OLD')
  })

  it('keeps a send at the prompt unchanged: no earlier output when nothing ran', async () => {
    // The prompt after a waitFor match is earlier output of its own: one send takes it first.
    await stack.run(id, 'true')
    const result = await stack.run(id, 'echo PLAIN')
    expect(result.earlierOutput).toBeUndefined()
    expect(result.viewport).toBe('echo PLAIN\nPLAIN\ndsh> ')
  })
})
