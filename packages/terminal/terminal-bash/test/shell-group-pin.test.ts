import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { parseConfig } from '../src/config'
import { ShellSession } from '../src/session/shell-session'
import { childBlocked, type FakeForeground, FakeTerminal, NONCE, prompt, SHELL_PID } from './support/fake-terminal'
import { FAKE_CONFIG, isSettled, tick } from './support/fake-session'

beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
})

/** Where bash's own group is under a sandbox launcher: not the top-level pid. */
const WRAPPED_SHELL = 7777

/** bash idle at its prompt under a wrapper: in front, waiting on the terminal, but not the top-level group. */
function wrappedShellWaiting(switches = 10): FakeForeground {
  return { pgid: WRAPPED_SHELL, shell: false, threads: [{ pid: WRAPPED_SHELL, state: 'stdin-wait', switches, syscall: 270 }] }
}

async function start(fake: FakeTerminal, settleMs = 100): Promise<ShellSession> {
  const session = new ShellSession(fake, parseConfig(FAKE_CONFIG), { nonce: NONCE })
  fake.emit(prompt(0))
  const started = session.startup(new AbortController().signal)
  await tick(settleMs)
  await started
  return session
}

describe('the shell group is pinned once startup settled on the controlled prompt', () => {
  it('a plain shell: the startup sample that recognised the shell is reused', async () => {
    const fake = new FakeTerminal()
    await start(fake)
    expect(fake.pins).toEqual([SHELL_PID])
  })

  it('a wrapped shell: the group in front at the startup prompt is pinned, and the marker then counts', async () => {
    const fake = new FakeTerminal()
    fake.foreground = wrappedShellWaiting()
    const session = await start(fake)
    expect(fake.pins).toEqual([WRAPPED_SHELL])

    const send = session.startSend({ text: 'echo hi', submit: true })
    await tick(1)
    fake.foreground = wrappedShellWaiting(11)
    fake.emit(`echo hi\r\nhi\r\n${prompt(0)}`)
    await tick(5)
    expect(await send.done).toMatchObject({ waitReason: 'stdin_read', exitCode: 0, viewport: 'echo hi\nhi\ndsh> ' })
  })

  it('without the exact tier the marker is the only evidence: pinned, a wrapped prompt settles at once', async () => {
    const fake = new FakeTerminal()
    fake.noExactTier = true
    fake.foreground = wrappedShellWaiting()
    // Startup itself, before the pin, can only settle by silence (idleSilenceMs + handoffGraceMs).
    const session = await start(fake, 4_000)
    expect(fake.pins).toEqual([WRAPPED_SHELL])
    const send = session.startSend({ text: 'true', submit: true })
    await tick(1)
    fake.emit(`true\r\n${prompt(0)}`)
    await tick(5)
    // Unpinned, nothing would recognise this prompt and the send would wait for idleSilenceMs.
    expect(await send.done).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 })
    // After other output the shell is no longer known idle: its next prompt must hold still for
    // pollIntervalMs (it may be one the shell still owed); the send after that is trusted again.
    fake.emit('[1]+  Done  sleep 1\r\n')
    const untrusted = session.startSend({ text: 'true', submit: true })
    await tick(1)
    fake.emit(`true\r\n${prompt(0)}`)
    await tick(45)
    expect(await isSettled(untrusted.done)).toBe(false)
    await tick(10)
    expect(await untrusted.done).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 })
    const trusted = session.startSend({ text: 'true', submit: true })
    await tick(1)
    fake.emit(`true\r\n${prompt(0)}`)
    await tick(5)
    expect(await trusted.done).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 })
  })

  it('SIGKILL aimed at the pinned shell is refused; a job in front may be killed', async () => {
    const fake = new FakeTerminal()
    fake.foreground = wrappedShellWaiting()
    const session = await start(fake)
    await expect(session.signal('SIGKILL')).rejects.toMatchObject({ code: 'REFUSED_SHELL_KILL' })
    fake.foreground = childBlocked(5000)
    expect(await session.signal('SIGKILL')).toEqual({ delivered: true, targetPgid: 5000 })
  })

  it('a shell without the controlled prompt pins nothing: the provider default stays', async () => {
    const fake = new FakeTerminal()
    fake.foreground = childBlocked(SHELL_PID)
    const session = new ShellSession(fake, parseConfig(FAKE_CONFIG), { nonce: NONCE })
    fake.emit('$ ')
    const started = session.startup(new AbortController().signal)
    await tick(3_100)
    await started
    expect(fake.pins).toEqual([])
  })
})

/**
 * Start a wrapped shell whose startup ends on the prompt with every inspection held by the test:
 * the startup's own looks are let through, and startup returns while the pin's look is still held.
 */
async function startWithPinLookHeld(fake: FakeTerminal): Promise<ShellSession> {
  fake.foreground = wrappedShellWaiting()
  fake.holdInspections = true
  const session = new ShellSession(fake, parseConfig(FAKE_CONFIG), { nonce: NONCE })
  fake.emit(prompt(0))
  let started = false
  void session.startup(new AbortController().signal).then(() => (started = true))
  for (;;) {
    await tick(1)
    if (started) break
    fake.heldInspections.shift()?.resolve()
  }
  expect(fake.heldInspections).toHaveLength(1)
  expect(fake.pins).toEqual([])
  return session
}

describe('the pin look runs after the open returned', () => {
  it('startup settles on the controlled prompt without waiting for any inspection; the only one is the pin look', async () => {
    const fake = new FakeTerminal()
    fake.foreground = wrappedShellWaiting()
    fake.holdInspections = true
    const session = new ShellSession(fake, parseConfig(FAKE_CONFIG), { nonce: NONCE })
    fake.emit(`welcome\r\n${prompt(0)}`)
    const started = session.startup(new AbortController().signal)
    await tick(1)
    await started
    expect(session.motd).toBe('welcome\ndsh> ')
    expect(fake.inspections).toBe(1)
    expect(fake.pins).toEqual([])
    fake.heldInspections.shift()!.resolve()
    await tick(0)
    expect(fake.pins).toEqual([WRAPPED_SHELL])
  })

  it('a send made meanwhile writes only after the look sampled, and takes its sample: no second look', async () => {
    const fake = new FakeTerminal()
    const session = await startWithPinLookHeld(fake)
    const inspectionsBefore = fake.inspections
    const send = session.startSend({ text: 'echo hi', submit: true })
    await tick(5)
    expect(fake.writes).toEqual([])
    fake.heldInspections.shift()!.resolve()
    await tick(1)
    expect(fake.pins).toEqual([WRAPPED_SHELL])
    expect(fake.writes).toEqual(['echo hi\r'])
    expect(fake.inspections).toBe(inspectionsBefore)
    fake.foreground = wrappedShellWaiting(11)
    fake.emit(`echo hi\r\nhi\r\n${prompt(0)}`)
    fake.holdInspections = false
    await tick(5)
    expect(await send.done).toMatchObject({ waitReason: 'stdin_read', exitCode: 0, viewport: 'echo hi\nhi\ndsh> ' })
  })

  it('a SIGKILL asked meanwhile waits for the pin: aimed at the idle shell it is refused', async () => {
    const fake = new FakeTerminal()
    const session = await startWithPinLookHeld(fake)
    const kill = session.signal('SIGKILL')
    await tick(1)
    expect(await isSettled(kill)).toBe(false)
    fake.heldInspections.shift()!.resolve()
    await expect(kill).rejects.toMatchObject({ code: 'REFUSED_SHELL_KILL' })
    expect(fake.signals).toEqual([])
  })

  it('output that arrived during the look makes the next look a fresh one', async () => {
    const fake = new FakeTerminal()
    const session = await startWithPinLookHeld(fake)
    fake.emit('[1]+  Done  sleep 1\r\n')
    const send = session.startSend({ text: 'true', submit: true })
    await tick(1)
    const inspectionsBefore = fake.inspections
    fake.heldInspections.shift()!.resolve()
    await tick(1)
    expect(fake.pins).toEqual([WRAPPED_SHELL])
    // The pin's sample predates that output: the send looked again before it wrote.
    expect(fake.inspections).toBe(inspectionsBefore + 1)
    expect(fake.writes).toEqual([])
    fake.holdInspections = false
    fake.heldInspections.shift()!.resolve()
    await tick(1)
    expect(fake.writes).toEqual(['true\r'])
    fake.emit(`true\r\n${prompt(0)}`)
    await tick(100)
    expect(await send.done).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 })
  })

  it('a person typing meanwhile is written after the look', async () => {
    const fake = new FakeTerminal()
    const session = await startWithPinLookHeld(fake)
    const typed = session.writeAsHuman('ls')
    await tick(1)
    expect(fake.writes).toEqual([])
    fake.heldInspections.shift()!.resolve()
    await typed
    expect(fake.pins).toEqual([WRAPPED_SHELL])
    expect(fake.writes).toEqual(['ls'])
  })
})
