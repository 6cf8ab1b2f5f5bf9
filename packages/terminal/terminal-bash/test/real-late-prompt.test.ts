import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { commandLine, eventually, foregroundGroup } from 'dsh-testkit'
import { PATIENT, startStack, type Stack } from './support/stack'

// A send typed while the shell still owes a prompt (its command was interrupted by `signal()`) must
// not settle on that owed prompt: the shell then reads the input and prints the prompt that answers
// it, which would otherwise settle the *next* send and shift every result by one.
let stack: Stack
beforeAll(async () => {
  stack = await startStack(PATIENT)
})
afterAll(async () => {
  await stack.dispose()
})

describe('a prompt the shell still owes', () => {
  it('after a signal, an empty send and the next command each get their own result', async () => {
    const { sessionId, pid } = await stack.open()
    // The race is between bash printing the owed prompt and our write reaching it: try it a few times.
    for (let round = 0; round < 10; round += 1) {
      // A short timeout of its own leaves `sleep 60` running in front without a send waiting for it;
      // the sends after it keep the patient default, so a loaded machine cannot time them out.
      expect(await stack.run(sessionId, 'sleep 60', { timeoutMs: 100 })).toMatchObject({ waitReason: 'timeout' })
      await eventually(() => commandLine(foregroundGroup(pid as number) ?? 0)?.[0]?.endsWith('sleep') === true, 'sleep to take the foreground')
      await stack.terminals.signal(stack.agent, sessionId, 'SIGINT')
      const empty = await stack.run(sessionId, '')
      const token = await stack.run(sessionId, `echo round-${round}-""done`)
      expect({ round, empty: empty.waitReason, token: token.viewport }).toEqual({
        round,
        empty: 'stdin_read',
        token: `echo round-${round}-""done\nround-${round}-done\ndsh> `,
      })
    }
  })
})
