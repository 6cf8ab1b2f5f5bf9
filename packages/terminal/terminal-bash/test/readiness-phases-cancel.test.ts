import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { childBlocked, childWaiting, prompt, shellWaiting } from './support/fake-terminal'
import { isSettled, openFake, tick } from './support/fake-session'

// The send's table, phase by phase (see SEND_TRANSITIONS): cancelled, before and after its SIGINT.
beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
})

/** Started in the trusted way (the shell was idle), `make` in front, then cancelled; `holdSignal` keeps the SIGINT in flight. */
async function cancelled(options: { holdSignal: boolean; config?: object }) {
  const opened = await openFake(options.config)
  const { fake, session } = opened
  fake.foreground = childBlocked(5000)
  fake.holdSignals = options.holdSignal
  const op = session.startSend({ text: 'make', submit: true })
  await tick(0)
  fake.emit('make\r\n')
  expect(op.cancel()).toBe(true)
  await tick(1)
  expect(options.holdSignal ? fake.heldSignals.length : fake.signals.length).toBe(1)
  return { ...opened, op }
}

/** A send whose write the provider holds, cancelled: the interrupt waits for the write first. */
async function cancelledWhileWriting(config = {}) {
  const opened = await openFake(config)
  const { fake, session } = opened
  fake.holdWrites = true
  fake.foreground = childBlocked(5000)
  const op = session.startSend({ text: 'make', submit: true })
  await tick(0)
  expect(op.cancel()).toBe(true)
  return { ...opened, op, write: fake.heldWrites[0]! }
}

describe('interrupting (SIGINT requested, not yet delivered)', () => {
  it('output → interrupting: collected for the result', async () => {
    const { fake, op } = await cancelled({ holdSignal: true })
    fake.emit('make: waiting for jobs\r\n')
    await tick(600)
    expect(await op.done).toMatchObject({ viewport: 'make\nmake: waiting for jobs\n', waitReason: 'timeout' })
  })

  it('interrupt-ready → interrupting: the cancel grace runs from the request, however slow the delivery', async () => {
    const { op } = await cancelled({ holdSignal: true })
    await tick(498)
    expect(await isSettled(op.done)).toBe(false)
    await tick(2)
    expect(await op.done).toMatchObject({ waitReason: 'timeout' })
    expect(await isSettled(op.released as Promise<void>)).toBe(false)
  })

  it('signalled → cancelling: only now does the prompt answering the SIGINT count', async () => {
    const { fake, op } = await cancelled({ holdSignal: true })
    fake.heldSignals[0]?.resolve()
    await tick(0)
    fake.foreground = shellWaiting(40)
    fake.emit(`^C\r\n${prompt(130)}`)
    await tick(55)
    expect(await op.done).toMatchObject({ viewport: 'make\n^C\ndsh> ', waitReason: 'stdin_read', exitCode: 130 })
    await op.released
  })

  it('write-failed → settled: done rejects with the provider’s error', async () => {
    const { op, write } = await cancelledWhileWriting()
    const failure = new Error('EIO')
    write.reject(failure)
    await expect(op.done).rejects.toBe(failure)
  })

  it('cancel → interrupting: a second cancel is accepted and interrupts nothing more', async () => {
    const { fake, op } = await cancelled({ holdSignal: true })
    expect(op.cancel()).toBe(true)
    await tick(1)
    expect(fake.heldSignals.length).toBe(1)
  })

  it('timeout → settled: timeoutMs from the start still bounds the send', async () => {
    const { fake, session } = await openFake({ cancelGraceMs: 5_000, idleSilenceMs: 60_000 })
    fake.foreground = childBlocked(5000)
    fake.holdSignals = true
    const op = session.startSend({ text: 'make', submit: true })
    await tick(9_000)
    op.cancel()
    await tick(999)
    expect(await isSettled(op.done)).toBe(false)
    await tick(1)
    expect(await op.done).toMatchObject({ waitReason: 'timeout' })
  })

  it('exit → settled as session_exit; released waits for the SIGINT call to return', async () => {
    const { fake, op } = await cancelled({ holdSignal: true })
    fake.finish({ exitCode: null, signal: 'SIGHUP' })
    await tick(0)
    expect(await op.done).toMatchObject({ waitReason: 'session_exit' })
    expect(await isSettled(op.released as Promise<void>)).toBe(false)
    fake.heldSignals[0]?.resolve()
    await op.released
  })

  it('ignores the write landing: the interrupt follows it, not a wait (no silence settles the send)', async () => {
    const { fake, op, write } = await cancelledWhileWriting({ idleSilenceMs: 1_000, cancelGraceMs: 5_000 })
    fake.holdSignals = true
    write.resolve()
    await tick(1)
    expect(fake.heldSignals.length).toBe(1)
    await tick(2_000)
    expect(await isSettled(op.done)).toBe(false)
    await tick(3_000)
    expect(await op.done).toMatchObject({ waitReason: 'timeout' })
  })

  it('ignores a prompt, probes and silence while the SIGINT is in flight', async () => {
    const { fake, op } = await cancelled({ holdSignal: true, config: { idleSilenceMs: 1_000, cancelGraceMs: 5_000 } })
    const inspections = fake.inspections
    fake.foreground = shellWaiting(40)
    fake.emit(`^C\r\n${prompt(130)}`)
    await tick(2_000)
    expect(fake.inspections).toBe(inspections)
    expect(await isSettled(op.done)).toBe(false)
  })

  it('ignores an interrupt-ready that comes after the ending: the prompt a description reads is not wiped', async () => {
    const { fake, session } = await openFake({ timeoutMs: 1_000, cancelGraceMs: 5_000 })
    fake.foreground = childBlocked(5000)
    const op = session.startSend({ text: 'make', submit: true })
    await tick(0)
    fake.emit('make\r\n')
    await tick(0)
    fake.holdInspections = true
    expect(op.cancel()).toBe(true)
    await tick(0)
    const interruptLook = fake.heldInspections.at(-1)!
    // The command ends on its own while the interrupt's sample is out: the shell prints its prompt.
    fake.foreground = shellWaiting(40)
    fake.emit(`${prompt(0)}`)
    await tick(1_000)
    // The timeout decided the ending; its description looks at the terminal (held too).
    const describeLook = fake.heldInspections.at(-1)!
    expect(describeLook).not.toBe(interruptLook)
    fake.holdInspections = false
    interruptLook.resolve()
    await tick(0)
    describeLook.resolve()
    await tick(0)
    expect(await op.done).toMatchObject({ waitReason: 'timeout', input: { kind: 'prompt' } })
  })
})

describe('cancelling (SIGINT delivered)', () => {
  it('output → cancelling: collected, and probed once its burst is done', async () => {
    const { fake, op } = await cancelled({ holdSignal: false })
    await tick(20)
    const inspections = fake.inspections
    fake.emit('make: *** [all] Interrupt\r\n')
    expect(op.readOutput()).toEqual({ delta: 'make\nmake: *** [all] Interrupt\n', truncated: false })
    await tick(0)
    expect(fake.inspections).toBe(inspections + 1)
  })

  it('prompt → cancelling: never trusted; it is probed at once and counts once it held still', async () => {
    const { fake, op } = await cancelled({ holdSignal: false })
    await tick(20)
    const inspections = fake.inspections
    fake.foreground = shellWaiting(40)
    fake.emit(`^C\r\n${prompt(130)}`)
    expect(fake.inspections).toBe(inspections + 1)
    await tick(5)
    expect(await isSettled(op.done)).toBe(false)
    await tick(50)
    expect(await op.done).toMatchObject({ waitReason: 'stdin_read', exitCode: 130 })
  })

  it('sample → cancelling: a REPL that caught the SIGINT and waits again settles, drained → settled', async () => {
    const { fake, op } = await cancelled({ holdSignal: false })
    fake.foreground = childWaiting(5000, 9)
    fake.emit('KeyboardInterrupt\r\n>>> ')
    await tick(10)
    expect(await op.done).toMatchObject({ viewport: 'make\nKeyboardInterrupt\n>>> ', waitReason: 'stdin_read' })
  })

  it('drain-broken → cancelling: output during the drain keeps the send open', async () => {
    const { fake, op } = await cancelled({ holdSignal: false })
    await tick(20)
    fake.foreground = childWaiting(5000, 9)
    fake.holdInspections = true
    fake.emit('KeyboardInterrupt\r\n>>')
    await tick(0)
    expect(fake.heldInspections.length).toBe(1)
    fake.holdInspections = false
    fake.heldInspections[0]?.resolve()
    for (let hop = 0; hop < 10; hop += 1) await Promise.resolve()
    fake.emit('> ')
    await tick(0)
    expect(await isSettled(op.done)).toBe(false)
    await tick(10)
    expect(await op.done).toMatchObject({ viewport: 'make\nKeyboardInterrupt\n>>> ', waitReason: 'stdin_read' })
  })

  it('write-failed → settled: a write that outlived the grace and then fails rejects done', async () => {
    const { fake, op, write } = await cancelledWhileWriting()
    await tick(501)
    expect(fake.signals).toEqual([{ signal: 'SIGINT', pgid: 5000 }])
    const failure = new Error('EIO')
    write.reject(failure)
    await expect(op.done).rejects.toBe(failure)
  })

  it('cancel → cancelling: accepted, no further interrupt', async () => {
    const { fake, op } = await cancelled({ holdSignal: false })
    fake.emit('^C')
    expect(op.cancel()).toBe(true)
    await tick(200)
    expect(fake.signals).toEqual([{ signal: 'SIGINT', pgid: 5000 }])
  })

  it('grace → settled as timeout when nothing proves readiness', async () => {
    const { op } = await cancelled({ holdSignal: false, config: { cancelGraceMs: 300 } })
    await tick(298)
    expect(await isSettled(op.done)).toBe(false)
    await tick(2)
    expect(await op.done).toMatchObject({ waitReason: 'timeout', sessionStatus: { kind: 'running' } })
  })

  it('timeout → settled: timeoutMs from the start still bounds the send', async () => {
    const { fake, session } = await openFake({ cancelGraceMs: 5_000, idleSilenceMs: 60_000 })
    fake.foreground = childBlocked(5000)
    const op = session.startSend({ text: 'make', submit: true })
    await tick(9_000)
    op.cancel()
    await tick(1)
    expect(fake.signals).toEqual([{ signal: 'SIGINT', pgid: 5000 }])
    await tick(998)
    expect(await isSettled(op.done)).toBe(false)
    await tick(1)
    expect(await op.done).toMatchObject({ waitReason: 'timeout' })
  })

  it('exit → settled as session_exit', async () => {
    const { fake, op } = await cancelled({ holdSignal: false })
    fake.emit('^C\r\n')
    fake.finish({ exitCode: 130, signal: null })
    await tick(0)
    expect(await op.done).toMatchObject({ viewport: 'make\n^C\n', waitReason: 'session_exit' })
  })

  it('ignores silence, and a write that lands late starts no waiting', async () => {
    const { fake, op, write } = await cancelledWhileWriting({ idleSilenceMs: 1_000, cancelGraceMs: 5_000 })
    await tick(5_001)
    expect(fake.signals).toEqual([{ signal: 'SIGINT', pgid: 5000 }])
    write.resolve()
    await tick(2_000)
    expect(await isSettled(op.done)).toBe(false)
    await tick(3_000)
    expect(await op.done).toMatchObject({ waitReason: 'timeout' })
  })
})
