import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { SEND_TRANSITIONS, type SendPhase } from '../src/readiness/send-transitions'
import { childBlocked, prompt, SHELL_PID } from './support/fake-terminal'
import { disturb, isSettled, openFake, tick } from './support/fake-session'

// The send's table, phase by phase (see SEND_TRANSITIONS): before the input reaches the shell.
beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
})

const ORDER: readonly SendPhase[] = ['inspecting', 'writing', 'waiting', 'interrupting', 'cancelling', 'describing', 'settled']

describe('the table', () => {
  it('phases only move forward, every live phase takes timeout, exit and cancel, and settled takes nothing', () => {
    for (const from of ORDER) {
      const row = SEND_TRANSITIONS[from]
      for (const transition of Object.values(row)) expect(ORDER.indexOf(transition.to)).toBeGreaterThanOrEqual(ORDER.indexOf(from))
      if (from === 'settled') expect(Object.keys(row)).toEqual([])
      // The ending is decided: only the input state (or the exit) moves it on; output is still kept.
      else if (from === 'describing') expect(Object.keys(row).sort()).toEqual(['described', 'exit', 'output'])
      else
        expect({ from, timeout: row.timeout?.to, exit: row.exit?.to, cancel: row.cancel !== undefined }).toEqual({
          from,
          timeout: 'describing',
          exit: 'settled',
          cancel: true,
        })
    }
  })
})

/** A send whose pre-write sample is held: output arrived since the last prompt, so it inspects first. */
async function inspecting() {
  const opened = await openFake()
  const { fake, session } = opened
  disturb(fake)
  fake.holdInspections = true
  const op = session.startSend({ text: 'echo hi', submit: true })
  await tick(0)
  expect(fake.heldInspections.length).toBe(1)
  const release = () => {
    fake.holdInspections = false
    for (const held of fake.heldInspections) held.resolve()
  }
  return { ...opened, op, release }
}

describe('inspecting', () => {
  it('inspected → writing: the input is written once the sample is in, not before', async () => {
    const { fake, op, release } = await inspecting()
    expect(fake.writes).toEqual([])
    release()
    await tick(0)
    expect(fake.writes).toEqual(['echo hi\r'])
    expect(await isSettled(op.done)).toBe(false)
  })

  it('no-input → waiting: a send without input neither inspects nor writes, and waits at once', async () => {
    const { fake, session } = await openFake()
    disturb(fake)
    const inspections = fake.inspections
    const op = session.startSend({ text: '', submit: false })
    expect(fake.inspections).toBe(inspections)
    fake.emit(prompt(2))
    await tick(10)
    expect(await op.done).toMatchObject({ viewport: 'dsh> ', waitReason: 'stdin_read', exitCode: 2 })
    expect(fake.writes).toEqual([])
  })

  it('cancel → interrupting: the input is never written, and the sample that comes in later is ignored', async () => {
    const { fake, op, release } = await inspecting()
    expect(op.cancel()).toBe(true)
    release()
    await tick(1)
    expect(fake.writes).toEqual([])
    expect(fake.signals).toEqual([{ signal: 'SIGINT', pgid: SHELL_PID }])
  })

  it('timeout → settled: and the sample that comes in later writes nothing', async () => {
    const { fake, op, release } = await inspecting()
    await tick(10_000)
    // Inspections are held: the input state goes untold once its bound passes.
    await tick(1_000)
    expect(await op.done).toMatchObject({ waitReason: 'timeout' })
    release()
    await tick(100)
    expect(fake.writes).toEqual([])
  })

  it('exit → settled: session_exit without an exit status, nothing written', async () => {
    const { fake, op, release } = await inspecting()
    fake.finish({ exitCode: 0, signal: null })
    await tick(0)
    release()
    // The job line printed between the sends is still shown, as earlier output.
    expect(await op.done).toEqual({
      viewport: '',
      waitReason: 'session_exit',
      sessionStatus: { kind: 'exited', exitCode: 0, signal: null },
      truncated: false,
      earlierOutput: '[1]+  Done  sleep 1\n',
      earlierTruncated: false,
      earlierFirstLine: 2,
    })
    expect(fake.writes).toEqual([])
  })

  it('ignores output, a prompt and silence: nothing settles, and that output is not the send’s', async () => {
    const { fake, op, release } = await inspecting()
    fake.emit(`noise\r\n${prompt(0)}`)
    await tick(5_000)
    expect(await isSettled(op.done)).toBe(false)
    expect(fake.heldInspections.length).toBe(1)
    release()
    await tick(0)
    fake.emit(`echo hi\r\nhi\r\n${prompt(0)}`)
    await tick(0)
    expect(await op.done).toMatchObject({ viewport: 'echo hi\nhi\ndsh> ', waitReason: 'stdin_read', exitCode: 0 })
  })
})

/** A send whose write the provider holds (the shell was known idle, so it writes at once). */
async function writing(config = {}) {
  const opened = await openFake(config)
  const { fake, session } = opened
  fake.holdWrites = true
  fake.foreground = childBlocked(5000)
  const op = session.startSend({ text: 'sleep 60', submit: true })
  await tick(0)
  expect(fake.heldWrites.length).toBe(1)
  return { ...opened, op, held: fake.heldWrites[0]! }
}

describe('writing', () => {
  it('written → waiting: evidence counts once the provider took the input', async () => {
    const { fake, op, held } = await writing()
    held.resolve()
    await tick(0)
    fake.emit(`sleep 60\r\n${prompt(0)}`)
    await tick(0)
    expect(await op.done).toMatchObject({ viewport: 'sleep 60\ndsh> ', waitReason: 'stdin_read', exitCode: 0 })
  })

  it('write-failed → settled: done rejects with the provider’s error and nothing is signalled', async () => {
    const { fake, op, held } = await writing()
    const failure = new Error('EIO')
    held.reject(failure)
    await expect(op.done).rejects.toBe(failure)
    await op.released
    expect(op.cancel()).toBe(false)
    expect(fake.signals).toEqual([])
  })

  it('output → writing: collected for the result, but nothing is judged', async () => {
    const { fake, op, held } = await writing()
    const inspections = fake.inspections
    fake.emit('early\r\n')
    await tick(100)
    expect(fake.inspections).toBe(inspections)
    held.resolve()
    await tick(0)
    fake.emit(`sleep 60\r\n${prompt(0)}`)
    await tick(0)
    expect((await op.done).viewport).toBe('early\nsleep 60\ndsh> ')
  })

  it('cancel → interrupting: the SIGINT waits until the write has landed', async () => {
    const { fake, op, held } = await writing()
    expect(op.cancel()).toBe(true)
    await tick(100)
    expect(fake.signals).toEqual([])
    held.resolve()
    await tick(1)
    expect(fake.events).toEqual(['write "sleep 60\\r"', 'SIGINT 5000'])
  })

  it('timeout → settled: a write that lands later starts no waiting', async () => {
    const { fake, op, held } = await writing()
    await tick(10_000)
    const result = await op.done
    expect(result).toMatchObject({ waitReason: 'timeout' })
    const inspections = fake.inspections
    held.resolve()
    await tick(1_000)
    expect(fake.inspections).toBe(inspections)
    expect(await op.done).toBe(result)
  })

  it('exit → settled: session_exit, and a write refused after the exit changes nothing', async () => {
    const { fake, op, held } = await writing()
    fake.finish({ exitCode: 1, signal: null })
    held.reject(new Error('terminal has exited'))
    await tick(0)
    expect(await op.done).toMatchObject({ waitReason: 'session_exit', sessionStatus: { kind: 'exited', exitCode: 1 } })
  })

  it('ignores a prompt, samples and silence until the write landed; the prompt then counts at once', async () => {
    const { fake, op, held } = await writing()
    const inspections = fake.inspections
    fake.emit(`sleep 60\r\n${prompt(0)}`)
    await tick(5_000)
    expect(await isSettled(op.done)).toBe(false)
    expect(fake.inspections).toBe(inspections)
    held.resolve()
    await tick(0)
    expect(await op.done).toMatchObject({ viewport: 'sleep 60\ndsh> ', waitReason: 'stdin_read', exitCode: 0 })
  })
})
