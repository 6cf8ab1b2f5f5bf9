import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { childBlocked, childWaiting, prompt, SHELL_PID, shellWaiting } from './support/fake-terminal'
import { disturb, isSettled, openFake, tick } from './support/fake-session'

beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
})

describe('cancellation', () => {
  it('cancelled during the pre-write inspection: the input is never written, a real SIGINT is', async () => {
    const { fake, session } = await openFake()
    disturb(fake, prompt(0))
    fake.holdInspections = true
    const op = session.startSend({ text: 'rm -rf build', submit: true })
    expect(op.cancel()).toBe(true)
    expect(op.cancel()).toBe(true)
    fake.holdInspections = false
    // The inspection that was in flight when cancel() ran settles afterwards.
    for (const held of fake.heldInspections) held.resolve()
    await tick(1)
    expect(fake.writes).toEqual([])
    expect(fake.signals).toEqual([{ signal: 'SIGINT', pgid: SHELL_PID }])
    fake.emit(`^C\r\n${prompt(130)}`)
    fake.foreground = shellWaiting(99)
    // After a signal the prompt counts once it held still for pollIntervalMs.
    await tick(55)
    expect(await op.done).toMatchObject({ viewport: '^C\ndsh> ', waitReason: 'stdin_read', exitCode: 130 })
    await op.released
    expect(fake.writes).toEqual([])
    expect(op.cancel()).toBe(false)
  })

  it('an already aborted caller signal never writes', async () => {
    const { fake, session } = await openFake()
    const op = session.startSend({ text: 'make deploy', submit: true, signal: AbortSignal.abort() })
    await tick(600)
    expect(await op.done).toMatchObject({ waitReason: 'timeout' })
    expect(fake.writes).toEqual([])
    expect(fake.signals.map((s) => s.signal)).toEqual(['SIGINT'])
  })

  it('cancelled during the write: the SIGINT waits until the write has landed', async () => {
    const { fake, session } = await openFake()
    fake.holdWrites = true
    const op = session.startSend({ text: 'sleep 60', submit: true })
    await tick(0)
    expect(fake.heldWrites.length).toBe(1)
    op.cancel()
    await tick(100)
    expect(fake.signals).toEqual([])
    fake.foreground = childBlocked(5000)
    fake.heldWrites[0]?.resolve()
    await tick(1)
    expect(fake.events).toEqual(['write "sleep 60\\r"', 'SIGINT 5000'])
    fake.foreground = shellWaiting(12)
    fake.emit(`sleep 60\r\n^C\r\n${prompt(130)}`)
    // After a signal the prompt counts once it held still for pollIntervalMs.
    await tick(55)
    expect(await op.done).toMatchObject({ waitReason: 'stdin_read', exitCode: 130 })
  })

  it('sends one SIGINT even when nothing happened: the provider repeats one swallowed before exec', async () => {
    const { fake, session } = await openFake({ cancelGraceMs: 1_000 })
    disturb(fake)
    fake.foreground = childBlocked(5000)
    const op = session.startSend({ text: 'sleep 60', submit: true })
    await tick(10)
    op.cancel()
    await tick(1)
    expect(fake.signals.length).toBe(1)
    await tick(120)
    expect(fake.signals).toEqual([{ signal: 'SIGINT', pgid: 5000 }])
    fake.foreground = shellWaiting(80)
    fake.emit(`^C\r\n${prompt(130)}`)
    // After a signal the prompt counts once it held still for pollIntervalMs.
    await tick(55)
    expect(await op.done).toMatchObject({ waitReason: 'stdin_read', exitCode: 130 })
  })

  it('does not repeat a SIGINT that had a visible effect', async () => {
    const { fake, session } = await openFake({ cancelGraceMs: 1_000 })
    disturb(fake)
    fake.foreground = childBlocked(5000)
    const op = session.startSend({ text: 'make', submit: true })
    await tick(10)
    op.cancel()
    await tick(1)
    fake.emit('make: *** [all] Interrupt\r\n')
    await tick(500)
    expect(fake.signals.length).toBe(1)
    await tick(600)
    expect(await op.done).toMatchObject({ waitReason: 'timeout' })
  })

  it('a write that never lands is interrupted after the cancel grace anyway', async () => {
    const { fake, session } = await openFake()
    fake.holdWrites = true
    fake.foreground = childBlocked(5000)
    const op = session.startSend({ text: 'x'.repeat(100), submit: true })
    await tick(0)
    op.cancel()
    await tick(499)
    expect(fake.signals).toEqual([])
    await tick(2)
    expect(fake.signals).toEqual([{ signal: 'SIGINT', pgid: 5000 }])
  })

  it('with no readiness after the SIGINT it settles as timeout within the cancel grace', async () => {
    const { fake, session } = await openFake({ cancelGraceMs: 300 })
    fake.foreground = childBlocked(5000)
    const op = session.startSend({ text: 'stubborn', submit: true })
    await tick(10)
    op.cancel()
    await tick(1)
    expect(fake.signals).toEqual([{ signal: 'SIGINT', pgid: 5000 }])
    await tick(297)
    expect(await isSettled(op.done)).toBe(false)
    await tick(3)
    expect(await op.done).toMatchObject({ waitReason: 'timeout', sessionStatus: { kind: 'running' } })
    await op.released
  })

  it('a REPL that catches the SIGINT and waits again settles as stdin_read', async () => {
    const { fake, session } = await openFake()
    fake.foreground = childWaiting(5000, 4)
    const op = session.startSend({ text: 'while True: pass', submit: true })
    await tick(0)
    fake.foreground = { pgid: 5000, shell: false, threads: [{ pid: 5000, state: 'running', switches: 5 }] }
    fake.emit('while True: pass\r\n... ')
    await tick(100)
    op.cancel()
    await tick(1)
    fake.emit('\r\nKeyboardInterrupt\r\n>>> ')
    fake.foreground = childWaiting(5000, 9)
    await tick(10)
    expect(await op.done).toMatchObject({ viewport: expect.stringContaining('KeyboardInterrupt'), waitReason: 'stdin_read' })
  })

  it('settles `done` within the grace even while the signal is slow, but holds `released` until it landed', async () => {
    const { fake, session } = await openFake()
    fake.foreground = childBlocked(5000)
    fake.holdSignals = true
    const op = session.startSend({ text: 'sleep 60', submit: true })
    await tick(10)
    op.cancel()
    await tick(1_000)
    expect(fake.heldSignals.length).toBe(1)
    expect(await op.done).toMatchObject({ waitReason: 'timeout' })
    expect(await isSettled(op.released as Promise<void>)).toBe(false)
    fake.heldSignals[0]?.resolve()
    await tick(0)
    await op.released
    expect(fake.signals).toEqual([{ signal: 'SIGINT', pgid: 5000 }])
  })

  it('the caller signal cancels like cancel()', async () => {
    const { fake, session } = await openFake()
    fake.foreground = childBlocked(5000)
    const caller = new AbortController()
    session.startSend({ text: 'sleep 60', submit: true, signal: caller.signal })
    await tick(10)
    caller.abort(new Error('user pressed stop'))
    await tick(1)
    expect(fake.signals).toEqual([{ signal: 'SIGINT', pgid: 5000 }])
  })

  it('closing during a cancel settles as session_exit and sends no signal', async () => {
    const { fake, session } = await openFake()
    fake.holdWrites = true
    const op = session.startSend({ text: 'sleep 60', submit: true })
    await tick(0)
    op.cancel()
    await session.close('test')
    fake.heldWrites[0]?.resolve()
    await tick(10)
    expect(await op.done).toMatchObject({ waitReason: 'session_exit' })
    await op.released
    expect(fake.signals).toEqual([])
  })
})
