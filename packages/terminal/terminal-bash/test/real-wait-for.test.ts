import { LinePattern } from 'dsh-basics'
import type { TerminalSessionId } from 'dsh-terminal'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PATIENT, startStack, type Stack } from './support/stack'

// waitFor: a send that waits for a line of output rather than for input, with real programs.
// Silence is short here (300 ms), so a send that must not end on it shows it by not ending so.
/** Silence a send that must end on the prompt may take on a loaded machine. */
const PATIENT_IDLE_MS = 20_000

let stack: Stack
let id: TerminalSessionId

beforeAll(async () => {
  stack = await startStack({ ...PATIENT, idleSilenceMs: 300 })
  id = (await stack.open()).sessionId
})
afterAll(async () => {
  await stack.dispose()
})

/** Ctrl-C to the session, waiting patiently for the prompt (a loaded machine may be silent for longer than 300 ms). */
function interrupt() {
  return stack.run(id, '\x03', { submit: false, idleMs: PATIENT_IDLE_MS })
}

describe('waitFor', () => {
  it('settles at a server\'s "Serving HTTP" line with the server still running; SIGINT then ends it', async () => {
    const started = await stack.run(id, 'python3 -m http.server 0 --bind 127.0.0.1', { waitFor: 'Serving HTTP on \\S+ port (\\d+)' })
    expect(started.waitReason).toBe('output_match')
    expect(started.match?.text).toMatch(/^Serving HTTP on 127\.0\.0\.1 port \d+$/)
    expect(started.match?.line).toContain('Serving HTTP')
    expect(started.viewport.endsWith(started.match?.line ?? '?')).toBe(true)
    expect(started.exitCode).toBeUndefined()
    expect(started.input).toMatchObject({ kind: 'busy', program: { name: 'python3' } })
    // Still serving: a request from the same shell's host reaches it.
    const port = /port (\d+)/.exec(started.match?.text ?? '')?.[1]
    const response = await fetch(`http://127.0.0.1:${port}/`)
    expect(response.status).toBe(200)
    await response.text()
    await stack.terminals.signal(stack.agent, id, 'SIGINT')
    const after = await stack.run(id, '', { submit: false, idleMs: PATIENT_IDLE_MS })
    expect(after).toMatchObject({ waitReason: 'stdin_read', input: { kind: 'prompt' } })
    expect(`${after.earlierOutput ?? ''}${after.viewport}`).toContain('Keyboard interrupt')
  })

  it('silence does not end it: a pattern that never matches ends at its timeout', async () => {
    const result = await stack.run(id, 'sleep 30', { waitFor: 'never printed', timeoutMs: 1_200 })
    expect(result).toMatchObject({ waitReason: 'timeout', input: { kind: 'busy', reading: 'no', program: { name: 'sleep' } } })
    expect(result.match).toBeUndefined()
    expect(await interrupt()).toMatchObject({ input: { kind: 'prompt' } })
  })

  it('with its own idleMs, silence still ends it', async () => {
    const result = await stack.run(id, 'sleep 30', { waitFor: 'never printed', idleMs: 300 })
    expect(result).toMatchObject({ waitReason: 'inferred_idle' })
    expect(await interrupt()).toMatchObject({ input: { kind: 'prompt' } })
  })

  it('the result ends with the matching line; what followed it starts the next result', async () => {
    const matched = await stack.run(id, "printf 'alpha\\nready now\\nafter the match\\n'; echo finished", { waitFor: 'ready' })
    expect(matched).toMatchObject({ waitReason: 'output_match', match: { text: 'ready', line: 'ready now' } })
    expect(matched.viewport).toMatch(/\nalpha\nready now$/)
    const next = await stack.run(id, '', { submit: false, idleMs: PATIENT_IDLE_MS })
    expect(next.waitReason).toBe('stdin_read')
    const shown = `${next.earlierOutput ?? ''}${next.viewport}`
    expect(shown).toContain('after the match\n')
    expect(shown).toContain('finished\n')
    expect(shown).not.toContain('ready now')
  })

  it('never matches the echo of its own command line', async () => {
    const result = await stack.run(id, 'sleep 0.2; echo token-42', { waitFor: 'token-\\d+' })
    expect(result).toMatchObject({ waitReason: 'output_match', match: { text: 'token-42', line: 'token-42' } })
    expect(result.viewport).toBe('sleep 0.2; echo token-42\ntoken-42')
    await stack.run(id, '', { submit: false, idleMs: PATIENT_IDLE_MS })
  })

  it('matches text on the line the cursor is still on', async () => {
    const result = await stack.run(id, 'sh -c \'printf "loading... ready?"; exec sleep 30\'', { waitFor: 'ready\\?' })
    expect(result).toMatchObject({ waitReason: 'output_match', match: { text: 'ready?', line: 'loading... ready?' } })
    expect(result.viewport.endsWith('loading... ready?')).toBe(true)
    expect(await interrupt()).toMatchObject({ input: { kind: 'prompt' } })
  })

  it('a command that ends first settles on the prompt, without a match', async () => {
    const result = await stack.run(id, 'echo nothing to see', { waitFor: 'never printed' })
    expect(result).toMatchObject({ waitReason: 'stdin_read', exitCode: 0, input: { kind: 'prompt' } })
    expect(result.match).toBeUndefined()
  })

  it('one compiled pattern serves send after send: it keeps no state between them', async () => {
    const pattern = LinePattern.compile('ping')
    for (let round = 0; round < 2; round++) {
      // One process that prints and goes on running: Ctrl-C cannot fall into a fork-to-exec window of the shell's.
      const result = await stack.run(id, "sh -c 'sleep 0.1; echo ping; exec sleep 30'", { waitFor: pattern })
      expect(result).toMatchObject({ waitReason: 'output_match', match: { text: 'ping' } })
      expect(await interrupt()).toMatchObject({ input: { kind: 'prompt' } })
    }
  })
})
