import type { TerminalSessionId } from 'dsh-terminal'
import { eventually } from 'dsh-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PATIENT, startStack, type Stack } from './support/stack'

// Output printed after a send settled on silence, through the real provider and registry: the next
// send's result carries it as earlier output, unless a read of the newest lines showed it first.
let stack: Stack
let id: TerminalSessionId

beforeAll(async () => {
  // A short silence so that the command below outlives its send, as `sleep 4` outlives 3 s.
  stack = await startStack({ ...PATIENT, idleSilenceMs: 300 })
  id = (await stack.open()).sessionId
})

afterAll(async () => {
  await stack.dispose()
})

/** Until the line before the prompt (which counts as the newest line) is `line`; reads that page only. */
async function printed(line: string): Promise<void> {
  await eventually(() => stack.terminals.read(stack.agent, id, { offset: 1, count: 1 }).text === line, `"${line}" to be printed`)
}

describe('earlier output', () => {
  it('an empty send after an inferred_idle result starts with what the command printed since', async () => {
    // idleMs: the caller asks silence to end the wait, though sleep is proven not to read.
    const first = await stack.run(id, 'sleep 1; echo LATE-OUTPUT', { idleMs: 300 })
    expect(first).toMatchObject({ viewport: 'sleep 1; echo LATE-OUTPUT\n', waitReason: 'inferred_idle' })
    expect(first.earlierOutput).toBeUndefined()
    // What ran in front when silence ended the send: sleep, proven not to read the terminal.
    expect(first.input).toMatchObject({ kind: 'busy', reading: 'no', program: { name: 'sleep', pid: expect.any(Number) } })
    await printed('LATE-OUTPUT')
    const next = await stack.run(id, '', { submit: false })
    expect(next).toEqual({
      viewport: '',
      waitReason: 'stdin_read',
      sessionStatus: { kind: 'running' },
      truncated: false,
      exitCode: 0,
      earlierOutput: 'LATE-OUTPUT\ndsh> ',
      earlierTruncated: false,
      earlierFirstLine: expect.any(Number),
      input: { kind: 'prompt' },
    })
    // The earlier output's lines are scrollback lines from earlierFirstLine on.
    expect(stack.terminals.read(stack.agent, id, { fromLine: next.earlierFirstLine as number, count: 2 }).text).toBe('LATE-OUTPUT\ndsh> ')
    // Taken once: the following send has nothing earlier.
    expect((await stack.run(id, 'echo again')).earlierOutput).toBeUndefined()
  })

  it('a read of the newest lines takes that output: the next send does not repeat it', async () => {
    expect(await stack.run(id, 'sleep 1; echo READ-OUTPUT', { idleMs: 300 })).toMatchObject({ waitReason: 'inferred_idle' })
    await printed('READ-OUTPUT')
    expect(stack.terminals.read(stack.agent, id, { count: 2 }).text).toBe('READ-OUTPUT\ndsh> ')
    expect((await stack.run(id, 'echo after')).earlierOutput).toBeUndefined()
  })
})
