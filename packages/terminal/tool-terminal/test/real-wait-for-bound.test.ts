import type { Context } from '@deepseek-ai/cordis'
import { asTerminalSessionId } from 'dsh-terminal'
import { children, eventually, isAlive } from 'dsh-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mountRealTools, type RealTools, text } from './real-stack'

// The attack on waitFor, on a real bash through ctx.tools.execute: a pattern that backtracks
// catastrophically in JavaScript's RegExp (`(a+)+$` against a run of `a` and a `b`) used to hold the
// host's event loop, so every other agent's call waited with it. Now it is matched in linear time:
// another agent is answered while the send still waits, and the send ends by its own timeout.

/** The attacker's line: 100 000 `a` and a `b`. */
const RUN = 100_000

let stack: RealTools
let root: Context
const call: RealTools['call'] = (...args) => stack.call(...args)

beforeAll(async () => {
  stack = await mountRealTools()
  root = stack.root
})

afterAll(async () => {
  await stack.dispose()
  expect(children(process.pid).filter(isAlive)).toEqual([])
})

describe('waitFor cannot hold the host', () => {
  it('(a+)+$ against 100 000 a and a b: another agent is answered while the send waits, and the send ends by its timeout', async () => {
    const attacker = await root.agents.create()
    const other = await root.agents.create()
    expect((await call(attacker, 'terminal_open', { type: 'shell' })).meta?.sessionId).toBe('pty-1')
    expect((await call(other, 'terminal_open', { type: 'shell' })).meta?.sessionId).toBe('pty-2')

    // The line is laid out first as 100 000 spaces and the `b`, then overwritten from column 0 by
    // the `a`s: every state of the line in progress ends in `b`, so no partial line matches (a run
    // of `a` at its end would), and each one with a run of `a` is already catastrophic for a RegExp.
    // `written` follows the line: once it is in the scrollback, the matcher has tested the line.
    const command = `printf '%${RUN + 1}s\\r' b; head -c ${RUN} /dev/zero | tr '\\0' a; echo; echo written; sleep 30`
    const settled: string[] = []
    const attack = call(attacker, 'terminal_send', { sessionId: 'pty-1', text: command, waitFor: '(a+)+$', timeoutMs: 8000 }).then((result) => {
      settled.push('attacker send')
      return result
    })
    const lines = (count: number) => root.terminals.read(attacker, asTerminalSessionId('pty-1'), { count }).text.split('\n')
    await eventually(() => lines(2).includes('written'), 'the attack line and the marker after it to be printed')
    // The completed line is the attacker's: the run of `a` and the `b`.
    const attackLine = root.terminals.read(attacker, asTerminalSessionId('pty-1'), { count: 1, offset: 1 }).text
    expect(attackLine === `${'a'.repeat(RUN)}b`).toBe(true)

    // The other agent is answered while the attacker's send still waits.
    const listed = await call(other, 'terminal_list')
    settled.push('other list')
    const echoed = await call(other, 'terminal_send', { sessionId: 'pty-2', text: 'echo other-agent' })
    settled.push('other send')
    expect(text(listed)).toMatch(/^pty-2 \[shell\] running /)
    expect(echoed.meta).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 })
    expect(text(echoed)).toContain('\nother-agent\n')

    const result = await attack
    expect(settled).toEqual(['other list', 'other send', 'attacker send'])
    expect(result.meta).toMatchObject({ waitReason: 'timeout', sessionStatus: { kind: 'running' } })
    expect(result.meta?.match).toBeUndefined()

    await call(attacker, 'terminal_signal', { sessionId: 'pty-1', signal: 'SIGINT' })
    expect((await call(attacker, 'terminal_send', { sessionId: 'pty-1', text: '', submit: false })).meta?.waitReason).toBe('stdin_read')
    await attacker.dispose()
    await other.dispose()
  })
})
