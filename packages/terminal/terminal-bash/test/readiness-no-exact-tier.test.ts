import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { parseConfig } from '../src/config'
import { ShellSession } from '../src/session/shell-session'
import { childBlocked, FakeTerminal, NONCE, prompt, shellRunning } from './support/fake-terminal'
import { FAKE_CONFIG, isSettled, tick } from './support/fake-session'

// Where stdin waits cannot be proven, the shell in front at its prompt is all readiness can see.
beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
})

describe('without the exact tier (macOS)', () => {
  it('a wait-only send does not take a prompt owed to typed-ahead input for an idle shell', async () => {
    const fake = new FakeTerminal()
    fake.noExactTier = true
    fake.foreground = shellRunning()
    const session = new ShellSession(fake, parseConfig(FAKE_CONFIG), { nonce: NONCE })
    fake.emit(`welcome\r\n${prompt(0)}`)
    const started = session.startup(new AbortController().signal)
    await tick(5)
    await started
    // `sleep 5` runs silently, and `echo queued` is typed ahead while it does: both end by silence.
    const sleeping = session.startSend({ text: 'sleep 5', submit: true })
    await tick(1)
    fake.foreground = childBlocked()
    fake.emit('sleep 5\r\n')
    await tick(3_600)
    expect(await sleeping.done).toMatchObject({ waitReason: 'inferred_idle' })
    const queued = session.startSend({ text: 'echo queued', submit: true })
    await tick(1)
    fake.emit('echo queued\r\n')
    await tick(3_600)
    expect(await queued.done).toMatchObject({ waitReason: 'inferred_idle' })
    // A send that only waits: sleep ends, bash prints the prompt it owed, then runs the queued line.
    const waiting = session.startSend({ text: '', submit: false })
    await tick(1)
    fake.foreground = shellRunning()
    fake.emit(prompt(0))
    await tick(20)
    expect(await isSettled(waiting.done)).toBe(false)
    fake.emit(`queued\r\n${prompt(0)}`)
    await tick(60)
    expect((await waiting.done).viewport).toBe('dsh> queued\ndsh> ')
    // Only now is the shell known idle: the next command gets its own output.
    const mine = session.startSend({ text: 'echo mine', submit: true })
    await tick(1)
    fake.emit(`echo mine\r\nmine\r\n${prompt(0)}`)
    await tick(5)
    expect(await mine.done).toMatchObject({ viewport: 'echo mine\nmine\ndsh> ', waitReason: 'stdin_read' })
  })
})
