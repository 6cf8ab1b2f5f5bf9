import type { ForegroundFacts } from 'dsh-subprocess'
import { LinuxInspector, type ProcessInspector } from 'dsh-subprocess-local/internal'
import type { TerminalSessionId } from 'dsh-terminal'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from './support/stack'

// The readiness path where the platform cannot prove a stdin wait (macOS: `ps` shows no syscalls),
// run against a real bash: the Linux inspector with every proof taken away, as the macOS inspector
// reports. The markers still settle sends exactly; what only a proof could tell is told as unprovable.
let stack: Stack
let id: TerminalSessionId

/** Facts as a platform without stdin proofs reports them: no waits, no threads, nothing proven either way. */
function withoutProofs(facts: ForegroundFacts | undefined): ForegroundFacts | undefined {
  if (!facts) return undefined
  const { notReadingProven: _dropped, ...rest } = facts
  return { ...rest, stdinWaitProof: 'unprovable', complete: false, waits: [], threads: [] }
}

/** The Linux inspector, its foreground looks stripped of their proofs. */
function inspectorWithoutProofs(): ProcessInspector {
  const linux = new LinuxInspector()
  return new Proxy(linux, {
    get(target, key) {
      if (key === 'foreground') return async (...args: Parameters<ProcessInspector['foreground']>) => withoutProofs(await target.foreground(...args))
      const value = Reflect.get(target, key, target) as unknown
      return typeof value === 'function' ? value.bind(target) : value
    },
  }) as ProcessInspector
}

beforeAll(async () => {
  stack = await startStack({ idleSilenceMs: 800, timeoutMs: 20_000, disposeGraceMs: 1_000 }, { subprocess: { inspector: inspectorWithoutProofs() } })
  id = (await stack.open()).sessionId
})

afterAll(async () => {
  await stack.dispose()
})

describe('a real bash where stdin waits cannot be proven (as on macOS)', () => {
  it('settles on the prompt marker, with the output and the exit status', async () => {
    expect(await stack.run(id, 'echo HELLO; false')).toMatchObject({
      waitReason: 'stdin_read',
      exitCode: 1,
      viewport: 'echo HELLO; false\nHELLO\ndsh> ',
      input: { kind: 'prompt' },
    })
  })

  it('ends a quiet command on silence, busy and unprovable: nothing proves it does not read', async () => {
    const quiet = await stack.run(id, 'sleep 1.5; echo AFTER-SLEEP')
    expect(quiet).toMatchObject({ waitReason: 'inferred_idle', input: { kind: 'busy', reading: 'unprovable' } })
    expect(quiet.exitCode).toBeUndefined()
    // A send without input waits for the marker that ends it, with its status.
    const ended = await stack.run(id, '', { submit: false })
    expect(ended).toMatchObject({ waitReason: 'stdin_read', exitCode: 0, input: { kind: 'prompt' } })
    expect(`${ended.earlierOutput ?? ''}${ended.viewport}`).toContain('AFTER-SLEEP')
  })

  it('tells a question only as busy and unprovable, and ends that send on silence', async () => {
    const asked = await stack.run(id, 'read -p "name? " answer')
    expect(asked).toMatchObject({ waitReason: 'inferred_idle', input: { kind: 'busy', reading: 'unprovable' } })
    expect(asked.viewport).toContain('name? ')
    expect(await stack.run(id, 'someone')).toMatchObject({ waitReason: 'stdin_read', input: { kind: 'prompt' } })
  })

  it('still tells a password prompt by its flags (canonical, echo off)', async () => {
    const asked = await stack.run(id, 'read -s -p "token: " token')
    expect(asked.input).toMatchObject({ kind: 'password' })
    expect(await stack.run(id, 'not-a-secret')).toMatchObject({ input: { kind: 'prompt' } })
  })
})
