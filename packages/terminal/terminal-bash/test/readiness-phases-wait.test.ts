import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { LinePattern } from 'dsh-basics'
import { childBlocked, childWaiting, prompt, shellWaiting } from './support/fake-terminal'
import { disturb, isSettled, openFake, tick } from './support/fake-session'
import type { SendFacts } from '../src/readiness/send-contract'
import { transitionFor } from '../src/readiness/send-transitions'

// The send's table, phase by phase (see SEND_TRANSITIONS): waiting for evidence, and settled.
beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
})

/**
 * A send waiting for `make`, which runs in front. `trusted`: the shell was known idle before the
 * write, so its next marker answers the send; otherwise the prompt must be confirmed by probes.
 */
async function waiting(trusted = true, config = {}) {
  const opened = await openFake(config)
  const { fake, session } = opened
  if (!trusted) disturb(fake)
  fake.foreground = childBlocked(5000)
  const op = session.startSend({ text: 'make', submit: true })
  await tick(0)
  expect(fake.writes).toEqual(['make\r'])
  return { ...opened, op }
}

/** Let promise continuations run, but no timer or immediate. */
async function microtasks(): Promise<void> {
  for (let hop = 0; hop < 10; hop += 1) await Promise.resolve()
}

describe('waiting', () => {
  it('output → waiting: collected for the result, and probed as soon as its burst is done', async () => {
    const { fake, op } = await waiting()
    await tick(20)
    const inspections = fake.inspections
    fake.emit('make\r\nstep 1\r\n')
    expect(op.readOutput()).toEqual({ delta: 'make\nstep 1\n', truncated: false })
    await tick(0)
    expect(fake.inspections).toBe(inspections + 1)
  })

  it('prompt → waiting, trusted: drains and settles on the marker without any probe', async () => {
    const { fake, op } = await waiting()
    const inspections = fake.inspections
    fake.foreground = shellWaiting(20)
    fake.emit(`make\r\n${prompt(2)}`)
    await tick(0)
    expect(await op.done).toMatchObject({ viewport: 'make\ndsh> ', waitReason: 'stdin_read', exitCode: 2 })
    expect(fake.inspections).toBe(inspections)
  })

  it('prompt → waiting, not trusted: probes at once and settles only once the prompt held still', async () => {
    const { fake, op } = await waiting(false)
    await tick(20)
    const inspections = fake.inspections
    fake.foreground = shellWaiting(20)
    fake.emit(`make\r\n${prompt(0)}`)
    expect(fake.inspections).toBe(inspections + 1)
    await tick(40)
    expect(await isSettled(op.done)).toBe(false)
    await tick(15)
    expect(await op.done).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 })
  })

  it('sample → waiting: a proven new stdin wait of another group drains, then drained → settled', async () => {
    const { fake, op } = await waiting()
    fake.foreground = childWaiting(5000, 3)
    fake.emit('make\r\nName: ')
    await tick(20)
    // A program proven to read, described from the proof's own sample (the fake reports no terminal flags).
    expect(await op.done).toEqual({
      viewport: 'make\nName: ',
      waitReason: 'stdin_read',
      sessionStatus: { kind: 'running' },
      truncated: false,
      // Line 1 is `welcome`, line 2 the prompt the command was typed on.
      firstLine: 2,
      input: { kind: 'program' },
    })
  })

  it('drain-broken → waiting: output during the drain keeps the send open, and the next proof settles it', async () => {
    const { fake, op } = await waiting(false)
    await tick(20)
    fake.foreground = childWaiting(5000, 3)
    fake.holdInspections = true
    fake.emit('make\r\nrunning\r\nName')
    await tick(0)
    expect(fake.heldInspections.length).toBe(1)
    fake.holdInspections = false
    fake.heldInspections[0]?.resolve()
    // The sample proves the wait; its drain waits for a full poll phase, and output arrives first.
    await microtasks()
    fake.emit(': ')
    await tick(0)
    expect(await isSettled(op.done)).toBe(false)
    await tick(10)
    expect(await op.done).toMatchObject({ viewport: 'make\nrunning\nName: ', waitReason: 'stdin_read' })
  })

  it('silence → settled as inferred_idle after idleSilenceMs without output', async () => {
    const { fake, op } = await waiting()
    fake.emit('make\r\n')
    await tick(2_990)
    expect(await isSettled(op.done)).toBe(false)
    await tick(20)
    expect(await op.done).toMatchObject({ viewport: 'make\n', waitReason: 'inferred_idle' })
  })

  it("the table: waiting accepts silence only when its guard holds for the send's facts", () => {
    const notReading = { notReadingProven: true }
    const facts = (options: SendFacts['options'], latestSample?: object, alternateScreen = false): SendFacts =>
      ({ options, stream: { arrivals: 7, alternateScreen }, latestSample, latestSampleArrivals: 7 }) as unknown as SendFacts
    const silence = { kind: 'silence' } as const
    expect(transitionFor('waiting', silence, facts({}))?.to).toBe('describing')
    expect(transitionFor('waiting', silence, facts({ settleOnSilence: false }))).toBeUndefined()
    expect(transitionFor('waiting', silence, facts({ waitFor: LinePattern.compile('x') }))).toBeUndefined()
    expect(transitionFor('waiting', silence, facts({ waitFor: LinePattern.compile('x'), idleMs: 100 }))?.to).toBe('describing')
    // Readiness is provable (the latest sample, after the latest output, shows a program not reading): silence waits.
    expect(transitionFor('waiting', silence, facts({}, notReading))).toBeUndefined()
    expect(transitionFor('waiting', silence, facts({ idleMs: 100 }, notReading))?.to).toBe('describing')
    expect(transitionFor('waiting', silence, facts({}, notReading, true))?.to).toBe('describing')
    expect(transitionFor('waiting', { kind: 'timeout' }, facts({ settleOnSilence: false }))?.to).toBe('describing')
  })

  it('silence is not accepted by a send that does not settle on silence: it runs on to a proven wait', async () => {
    const { fake, session } = await openFake()
    fake.foreground = childBlocked(5000)
    const op = session.startSend({ text: 'serve', submit: true, settleOnSilence: false })
    fake.emit('serve\r\nlistening\r\n')
    await tick(9_000)
    expect(await isSettled(op.done)).toBe(false)
    fake.foreground = childWaiting(5000, 3)
    fake.emit('Name: ')
    await tick(20)
    expect(await op.done).toMatchObject({ viewport: 'serve\nlistening\nName: ', waitReason: 'stdin_read' })
  })

  it("timeout → settled at the send's own timeoutMs, not the backend's, when it does not settle on silence", async () => {
    const { fake, session } = await openFake()
    fake.foreground = childBlocked(5000)
    const op = session.startSend({ text: 'serve', submit: true, settleOnSilence: false, timeoutMs: 60_000 })
    await tick(59_990)
    expect(await isSettled(op.done)).toBe(false)
    await tick(20)
    expect(await op.done).toMatchObject({ waitReason: 'timeout' })
  })

  it('cancel → interrupting: a real SIGINT goes to the group in front', async () => {
    const { fake, op } = await waiting()
    expect(op.cancel()).toBe(true)
    await tick(1)
    expect(fake.signals).toEqual([{ signal: 'SIGINT', pgid: 5000 }])
    expect(await isSettled(op.done)).toBe(false)
  })

  it('timeout → settled, even while output keeps the silence clock from firing', async () => {
    const { fake, op } = await waiting(true, { idleSilenceMs: 1_000 })
    for (let step = 0; step < 20; step += 1) {
      fake.emit(`step ${step}\r\n`)
      await tick(500)
    }
    expect(await op.done).toMatchObject({ waitReason: 'timeout' })
  })

  it('exit → settled as session_exit, with the output before the exit', async () => {
    const { fake, op } = await waiting()
    fake.emit('make\r\nSegmentation fault\r\n')
    fake.finish({ exitCode: 139, signal: null })
    await tick(0)
    expect(await op.done).toMatchObject({ viewport: 'make\nSegmentation fault\n', waitReason: 'session_exit' })
  })
})

describe('settled', () => {
  it('ignores everything: output, cancel, exit, a late sample', async () => {
    const { fake, op } = await waiting(true, { idleSilenceMs: 60_000, timeoutMs: 100 })
    fake.holdInspections = true
    await tick(100)
    // The timeout decided the ending; telling the input state waits for an inspection that is held, up to its bound.
    expect(await isSettled(op.done)).toBe(false)
    await tick(1_000)
    const result = await op.done
    expect(result).toMatchObject({ waitReason: 'timeout' })
    expect(result.input).toBeUndefined()
    expect(fake.heldInspections.length).toBeGreaterThan(0)
    fake.emit(`later\r\n${prompt(0)}`)
    expect(op.readOutput()).toEqual({ delta: '', truncated: false })
    expect(op.cancel()).toBe(false)
    fake.holdInspections = false
    fake.foreground = childWaiting()
    for (const held of fake.heldInspections) held.resolve()
    fake.finish({ exitCode: 0, signal: null })
    await tick(1_000)
    expect(await op.done).toBe(result)
    expect(fake.signals).toEqual([])
    expect(fake.writes).toEqual(['make\r'])
  })

  it('a write refused after the send timed out does not turn the result into an error', async () => {
    const { fake, session } = await openFake({ timeoutMs: 100 })
    fake.holdWrites = true
    const op = session.startSend({ text: 'x'.repeat(100), submit: true })
    await tick(100)
    expect(await op.done).toMatchObject({ waitReason: 'timeout' })
    fake.heldWrites[0]?.reject(new Error('EIO'))
    await tick(0)
    expect(await op.done).toMatchObject({ waitReason: 'timeout' })
    await op.released
  })
})
