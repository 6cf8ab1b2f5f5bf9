import type { TerminalSessionId } from 'dsh-terminal'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PATIENT, startStack, type Stack } from './support/stack'

// When silence settles a send. A line-mode command that is quiet but proven not to read the terminal
// (sleep) is waited for: silence alone settles only where nothing can be proven. A full-screen
// program that redraws without reading (watch) never goes quiet: its screen is the result, returned
// once it has drawn for the silence bound. A short silence bound makes the differences show.
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

describe('a full-screen program that redraws without reading', () => {
  it('returns its screen once it has drawn for the silence bound, redraws or not', async () => {
    const result = await stack.run(id, 'watch -t -n 0.2 date +WATCHED-%N')
    expect(result).toMatchObject({ waitReason: 'inferred_idle', input: { kind: 'busy' } })
    expect(result.screen?.alternateScreen).toBe(true)
    expect(result.screen?.lines.join('\n')).toMatch(/WATCHED-\d+/)
    expect(await stack.run(id, '\x03', { submit: false })).toMatchObject({ input: { kind: 'prompt' } })
  })
})
