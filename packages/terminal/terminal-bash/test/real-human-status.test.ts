import type { TerminalHumanObserver } from 'dsh-terminal'
import { eventually } from 'dsh-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from './support/stack'

// A status the shell reports after a person typed a command is theirs: the agent's next send
// without input must not report it as the status of what the agent ran.
let stack: Stack

beforeAll(async () => {
  stack = await startStack(undefined, { terminals: { humanActiveMs: 0 } })
})
afterAll(async () => {
  await stack.dispose()
})

describe("a person's command status", () => {
  it('is not reported by the agent’s next send without input', async () => {
    const id = (await stack.open()).sessionId
    let printed = ''
    const observer: TerminalHumanObserver = { onOutput: (bytes) => (printed += Buffer.from(bytes).toString('utf8')), onEnd: () => {} }
    const view = await stack.terminals.observeAsHuman(stack.agent, id, observer)
    view.takeWrite()
    await view.write('false; echo person-done\r')
    await eventually(() => /person-done\r?\n.*dsh> $/s.test(printed), 'the person’s command to end at the prompt')
    const waited = await stack.run(id, '', { submit: false })
    expect(waited.earlierOutput).toContain('person-done')
    expect(waited.exitCode).toBeUndefined()
    view.close()
    // The agent's own command still reports its status.
    expect((await stack.run(id, 'false')).exitCode).toBe(1)
  })
})
