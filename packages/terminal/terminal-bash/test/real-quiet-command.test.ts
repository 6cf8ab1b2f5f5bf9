import type { TerminalSessionId } from 'dsh-terminal'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PATIENT, startStack, type Stack } from './support/stack'

// A command that is quiet but proven not to read the terminal (sleep) is waited for: silence alone
// settles a send only where nothing can be proven. A short silence bound makes the difference show.
let stack: Stack
let id: TerminalSessionId

beforeAll(async () => {
  stack = await startStack({ ...PATIENT, idleSilenceMs: 300 })
  id = (await stack.open()).sessionId
})

afterAll(async () => {
  await stack.dispose()
})

describe('a quiet command proven not to read', () => {
  it('is waited for past the silence bound, until it ends at the prompt with its output and status', async () => {
    const result = await stack.run(id, 'sleep 1.5; echo DONE-AFTER-SLEEP')
    expect(result).toMatchObject({ waitReason: 'stdin_read', exitCode: 0, input: { kind: 'prompt' } })
    expect(result.viewport).toContain('\nDONE-AFTER-SLEEP\n')
  })

  it('ends at the timeout when it outlasts it, still shown busy and not reading', async () => {
    const result = await stack.run(id, 'sleep 30', { timeoutMs: 1500 })
    expect(result).toMatchObject({ waitReason: 'timeout', input: { kind: 'busy', reading: 'no', program: { name: 'sleep' } } })
    expect(await stack.run(id, '\x03', { submit: false })).toMatchObject({ input: { kind: 'prompt' } })
  })

  it('still ends on silence when the caller gives idleMs', async () => {
    const result = await stack.run(id, 'sleep 30', { idleMs: 300 })
    expect(result).toMatchObject({ waitReason: 'inferred_idle', input: { kind: 'busy', reading: 'no' } })
    expect(await stack.run(id, '\x03', { submit: false })).toMatchObject({ input: { kind: 'prompt' } })
  })

  it('ends as soon as the quiet command starts reading, without waiting for more silence', async () => {
    const result = await stack.run(id, 'sleep 1; read -p "name? " answer')
    expect(result).toMatchObject({ waitReason: 'stdin_read' })
    expect(result.viewport).toContain('name? ')
    expect(await stack.run(id, 'x')).toMatchObject({ waitReason: 'stdin_read', input: { kind: 'prompt' } })
  })
})
