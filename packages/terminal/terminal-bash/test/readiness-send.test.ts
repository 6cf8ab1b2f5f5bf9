import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { parseConfig } from '../src/config'
import { ShellSession } from '../src/session/shell-session'
import { childBlocked, childWaiting, FakeTerminal, marker, NONCE, prompt, shellRunning, shellWaiting } from './support/fake-terminal'
import { disturb, FAKE_CONFIG, isSettled, openFake, tick } from './support/fake-session'

beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
})

describe('startup', () => {
  it('settles on the prompt and returns the banner and prompt as motd', async () => {
    const { session } = await openFake()
    expect(session.motd).toBe('welcome\ndsh> ')
    expect(session.status()).toEqual({ kind: 'running' })
  })

  it('does not inspect a shell that printed nothing yet, and settles once its prompt arrived', async () => {
    const fake = new FakeTerminal()
    fake.foreground = shellRunning()
    const session = new ShellSession(fake, parseConfig(FAKE_CONFIG), { nonce: NONCE })
    const started = session.startup(new AbortController().signal)
    await tick(200)
    // Nothing can count before output (a stdin wait needs it, a prompt is output): no probe ran.
    expect(fake.inspections).toBe(0)
    fake.foreground = shellWaiting()
    fake.emit(`welcome\r\n${prompt(0)}`)
    await tick(5)
    await started
    expect(fake.inspections).toBeGreaterThan(0)
    expect(session.motd).toBe('welcome\ndsh> ')
  })
})

describe('tier A: the controlled prompt', () => {
  it('settles a single-line command from an idle prompt on its marker, without any inspection', async () => {
    const { fake, session } = await openFake()
    const inspections = fake.inspections
    // Startup ended on the prompt and nothing arrived since: the shell is known idle there.
    const op = session.startSend({ text: 'true', submit: true })
    expect(fake.writes).toEqual(['true\r'])
    fake.emit(`true\r\n${prompt(0)}`)
    await tick(0)
    expect(await op.done).toEqual({
      viewport: 'true\ndsh> ',
      waitReason: 'stdin_read',
      sessionStatus: { kind: 'running' },
      truncated: false,
      firstLine: 2,
      exitCode: 0,
      input: { kind: 'prompt' },
    })
    expect(fake.inspections - inspections).toBe(0)
  })

  it('inspects before writing once output arrived since the last prompt, and trusts the marker if idle', async () => {
    const { fake, session } = await openFake()
    disturb(fake, `bg job says hi\r\n${prompt(0)}`)
    const inspections = fake.inspections
    const op = session.startSend({ text: 'true', submit: true })
    expect(fake.writes).toEqual([])
    await tick(0)
    expect(fake.writes).toEqual(['true\r'])
    fake.emit(`true\r\n${prompt(0)}`)
    await tick(0)
    expect(await op.done).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 })
    expect(fake.inspections - inspections).toBe(1)
  })

  it('a signal makes the next send inspect again', async () => {
    const { fake, session } = await openFake()
    await session.signal('SIGINT')
    const op = session.startSend({ text: 'true', submit: true })
    expect(fake.writes).toEqual([])
    await tick(0)
    fake.emit(`true\r\n${prompt(0)}`)
    await tick(0)
    expect(await op.done).toMatchObject({ waitReason: 'stdin_read' })
  })

  it('without a fresh inspection the shell reading without a prompt needs output after the write', async () => {
    const { fake, session } = await openFake()
    // Idle prompt known: no pre-write inspection. A wait of the shell's group with changed counters
    // but no output could be the old wait that has not seen the input yet.
    const op = session.startSend({ text: 'cat <<EOF', submit: true })
    fake.foreground = shellWaiting(20)
    await tick(30)
    expect(await isSettled(op.done)).toBe(false)
    fake.emit('cat <<EOF\r\n> ')
    fake.foreground = shellWaiting(21)
    await tick(20)
    expect(await op.done).toMatchObject({ viewport: 'cat <<EOF\n> ', waitReason: 'stdin_read' })
  })

  it('reports the status carried by the marker as exitCode', async () => {
    const { fake, session } = await openFake()
    const op = session.startSend({ text: 'false', submit: true })
    await tick(0)
    fake.emit(`false\r\n${marker(1)}`)
    fake.emit('dsh> ')
    await tick(0)
    expect(await op.done).toMatchObject({ waitReason: 'stdin_read', exitCode: 1 })
  })

  it('with multi-line input the prompt counts only once the shell is blocked reading again', async () => {
    const { fake, session } = await openFake()
    const op = session.startSend({ text: 'echo a\necho b', submit: true })
    await tick(0)
    fake.foreground = shellRunning()
    fake.emit(`echo a\r\na\r\n${prompt(0)}`)
    await tick(20)
    expect(await isSettled(op.done)).toBe(false)
    fake.emit(`echo b\r\nb\r\n${prompt(0)}`)
    fake.foreground = shellWaiting(20)
    // After a write the shell may still owe a prompt: this one counts once it held still for pollIntervalMs.
    await tick(45)
    expect(await isSettled(op.done)).toBe(false)
    await tick(10)
    expect(await op.done).toMatchObject({ viewport: 'echo a\na\ndsh> echo b\nb\ndsh> ', waitReason: 'stdin_read' })
  })

  it('a late prompt followed by typed-ahead input does not settle the send', async () => {
    const { fake, session } = await openFake()
    disturb(fake)
    // The previous command is still running when the next input is written.
    fake.foreground = childBlocked()
    const op = session.startSend({ text: 'echo next', submit: true })
    await tick(0)
    fake.emit('echo next\r\n')
    // The old command ends: bash prints its prompt, then reads the typed-ahead line.
    fake.foreground = shellRunning()
    fake.emit(prompt(0))
    await tick(10)
    fake.emit('echo next\r\nnext\r\n')
    await tick(10)
    expect(await isSettled(op.done)).toBe(false)
    fake.foreground = shellWaiting(30)
    fake.emit(prompt(0))
    await tick(55)
    const result = await op.done
    expect(result.viewport).toBe('echo next\ndsh> echo next\nnext\ndsh> ')
  })

  it('a late prompt with the shell blocked reading does not settle if the shell then reads our input', async () => {
    const { fake, session } = await openFake()
    disturb(fake)
    // A command the shell still owes a prompt for (interrupted, or left running by a timed-out send).
    fake.foreground = childBlocked()
    const op = session.startSend({ text: 'echo next', submit: true })
    await tick(0)
    // The owed prompt arrives and bash blocks reading before our input reached the terminal.
    fake.foreground = shellWaiting(30)
    fake.emit(prompt(130))
    await tick(20)
    expect(await isSettled(op.done)).toBe(false)
    // The input lands: bash woke (its wait changed) before any of its output arrived.
    fake.foreground = shellWaiting(31)
    await tick(40)
    expect(await isSettled(op.done)).toBe(false)
    fake.emit(`echo next\r\nnext\r\n${prompt(0)}`)
    await tick(55)
    expect(await op.done).toMatchObject({ viewport: 'dsh> echo next\nnext\ndsh> ', exitCode: 0, waitReason: 'stdin_read' })
  })

  it('a prompt followed by more output on its line never settles', async () => {
    const { fake, session } = await openFake()
    fake.foreground = childBlocked()
    const op = session.startSend({ text: 'slow', submit: true })
    await tick(0)
    fake.emit(`slow\r\n${prompt(0)}stray output`)
    fake.foreground = shellRunning()
    await tick(2_000)
    expect(await isSettled(op.done)).toBe(false)
    fake.foreground = shellWaiting(40)
    fake.emit(`\r\n${prompt(0)}`)
    await tick(5)
    expect(await op.done).toMatchObject({ waitReason: 'stdin_read' })
  })

  it('the literal prompt text without a marker does not settle', async () => {
    const { fake, session } = await openFake()
    const op = session.startSend({ text: "echo 'dsh> '; sleep 9", submit: true })
    await tick(0)
    fake.foreground = childBlocked()
    fake.emit("echo 'dsh> '; sleep 9\r\ndsh> ")
    await tick(2_999)
    expect(await isSettled(op.done)).toBe(false)
    await tick(10)
    expect(await op.done).toMatchObject({ waitReason: 'inferred_idle' })
  })

  it('a marker with another nonce (a nested shell, a replayed log) is not this shell’s prompt', async () => {
    const { fake, session } = await openFake()
    const op = session.startSend({ text: 'cat old.log', submit: true })
    await tick(0)
    fake.foreground = childBlocked()
    fake.emit(`cat old.log\r\n${marker(0, 123456)}dsh> `)
    await tick(1_000)
    expect(await isSettled(op.done)).toBe(false)
    fake.foreground = shellWaiting(50)
    fake.emit(`\r\n${prompt(0)}`)
    await tick(5)
    expect(await op.done).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 })
  })

  it('our marker with a child in front (after a non-idle start) does not count', async () => {
    const { fake, session } = await openFake()
    disturb(fake)
    fake.foreground = childBlocked()
    const op = session.startSend({ text: 'x', submit: true })
    await tick(0)
    fake.emit(`x\r\n${prompt(0)}`)
    await tick(1_000)
    expect(await isSettled(op.done)).toBe(false)
    fake.foreground = shellWaiting(60)
    await tick(100)
    expect(await op.done).toMatchObject({ waitReason: 'stdin_read' })
  })
})

describe('tier B: a proven new stdin wait', () => {
  it('a REPL taking the foreground and waiting settles without a marker', async () => {
    const { fake, session } = await openFake()
    const op = session.startSend({ text: 'python3 -q', submit: true })
    await tick(0)
    fake.emit('python3 -q\r\n')
    await tick(3)
    fake.foreground = childWaiting(5000, 3)
    fake.emit('>>> ')
    await tick(10)
    expect(await op.done).toEqual({
      viewport: 'python3 -q\n>>> ',
      waitReason: 'stdin_read',
      sessionStatus: { kind: 'running' },
      truncated: false,
      firstLine: 2,
      input: { kind: 'program' },
    })
  })

  it('a wait that existed before the write is not readiness until the program ran', async () => {
    const { fake, session } = await openFake()
    disturb(fake)
    fake.foreground = childWaiting(5000, 7)
    const op = session.startSend({ text: '1+1', submit: true })
    await tick(30)
    expect(await isSettled(op.done)).toBe(false)
    fake.emit('1+1\r\n2\r\n>>> ')
    fake.foreground = childWaiting(5000, 9)
    await tick(10)
    expect(await op.done).toMatchObject({ viewport: '1+1\n2\n>>> ', waitReason: 'stdin_read' })
  })

  it('the prompt that was on the line before the write does not announce a new wait', async () => {
    const { fake, session } = await openFake()
    disturb(fake, '>>> ')
    fake.foreground = childWaiting(5000, 7)
    const op = session.startSend({ text: '1+1', submit: true })
    await tick(0)
    // The REPL already answered and waits again, but its output is still in the kernel.
    fake.foreground = childWaiting(5000, 9)
    await tick(20)
    expect(await isSettled(op.done)).toBe(false)
    fake.emit('1+1\r\n2\r\n>>> ')
    await tick(5)
    expect(await op.done).toMatchObject({ viewport: '1+1\n2\n>>> ', waitReason: 'stdin_read' })
  })

  it('output arriving while a proof drains keeps the send open and is included', async () => {
    const { fake, session } = await openFake()
    const op = session.startSend({ text: 'python3 -q', submit: true })
    await tick(0)
    fake.foreground = childWaiting(5000, 3)
    fake.emit('python3 -q\r\n')
    await tick(1)
    // A probe just proved the wait; output the program wrote before blocking arrives late.
    fake.emit('>>> ')
    await tick(0)
    expect(await isSettled(op.done)).toBe(false)
    await tick(10)
    expect((await op.done).viewport).toBe('python3 -q\n>>> ')
  })

  it('the shell reading without a prompt (heredoc) needs the same wait twice', async () => {
    const { fake, session } = await openFake()
    const op = session.startSend({ text: 'cat <<EOF', submit: true })
    await tick(0)
    fake.foreground = shellWaiting(11)
    fake.emit('cat <<EOF\r\n> ')
    await tick(20)
    expect(await op.done).toMatchObject({ viewport: 'cat <<EOF\n> ', waitReason: 'stdin_read' })
    expect(op.done).toBeDefined()
  })
})

describe('tier C and D: silence and timeout', () => {
  it('silence settles as inferred_idle, with the handoff grace once a marker was seen', async () => {
    const { fake, session } = await openFake()
    disturb(fake)
    fake.foreground = childBlocked()
    const op = session.startSend({ text: 'x', submit: true })
    await tick(0)
    fake.emit(`x\r\n${prompt(0)}`)
    await tick(3_000 + 100)
    expect(await isSettled(op.done)).toBe(false)
    await tick(500)
    expect(await op.done).toMatchObject({ waitReason: 'inferred_idle', exitCode: 0 })
  })

  it('silence means nothing arrived: output delivered right after the silence timer fired defers settlement', async () => {
    const { fake, session } = await openFake()
    fake.foreground = childBlocked()
    const op = session.startSend({ text: 'x', submit: true })
    await tick(0)
    // Same due time as the send's silence timer, registered after it: runs between its check and settlement.
    setTimeout(() => fake.emit('late'), 3_000)
    await tick(3_000)
    expect(await isSettled(op.done)).toBe(false)
    // The late output restarted the silence window.
    await tick(2_999)
    expect(await isSettled(op.done)).toBe(false)
    // (Fake immediates advance the fake clock by a millisecond each.)
    await tick(10)
    expect(await op.done).toMatchObject({ viewport: 'late', waitReason: 'inferred_idle' })
  })

  it('times out after timeoutMs from the start of the send', async () => {
    const { fake, session } = await openFake({ idleSilenceMs: 60_000 })
    fake.foreground = childBlocked()
    const op = session.startSend({ text: 'sleep 100', submit: true })
    await tick(9_999)
    expect(await isSettled(op.done)).toBe(false)
    await tick(1)
    expect(await op.done).toMatchObject({ waitReason: 'timeout', sessionStatus: { kind: 'running' } })
  })

  it('a stale probe finishing after settlement changes nothing and schedules nothing', async () => {
    const { fake, session } = await openFake({ idleSilenceMs: 60_000, timeoutMs: 100 })
    fake.foreground = childBlocked()
    const op = session.startSend({ text: 'python3 -q', submit: true })
    await tick(0)
    fake.holdInspections = true
    await tick(99)
    expect(fake.heldInspections.length).toBeGreaterThan(0)
    await tick(1)
    // Telling the input state waits for the held inspection, up to its bound.
    await tick(1_000)
    const result = await op.done
    expect(result.waitReason).toBe('timeout')
    const inspections = fake.inspections
    fake.foreground = childWaiting()
    fake.holdInspections = false
    for (const held of fake.heldInspections) held.resolve()
    await tick(1_000)
    expect(fake.inspections).toBe(inspections)
    expect(await op.done).toBe(result)
    expect(op.cancel()).toBe(false)
  })
})

describe('exit', () => {
  it('settles as session_exit with the output produced before the exit', async () => {
    const { fake, session } = await openFake()
    const op = session.startSend({ text: 'exit 3', submit: true })
    await tick(0)
    fake.emit('exit 3\r\nexit\r\n')
    fake.finish({ exitCode: 3, signal: null })
    await tick(0)
    expect(await op.done).toEqual({
      viewport: 'exit 3\nexit\n',
      waitReason: 'session_exit',
      sessionStatus: { kind: 'exited', exitCode: 3, signal: null },
      truncated: false,
      firstLine: 2,
    })
    const later = session.startSend({ text: 'echo hi', submit: true })
    expect(await later.done).toMatchObject({ waitReason: 'session_exit', viewport: '' })
    expect(fake.writes).toEqual(['exit 3\r'])
  })
})

describe('exit status: only a marker that arrived during the send', () => {
  /** `false` ran and its result carried exit 1: the stale status every later case must not repeat. */
  async function afterFalse() {
    const opened = await openFake()
    const op = opened.session.startSend({ text: 'false', submit: true })
    opened.fake.emit(`false\r\n${prompt(1)}`)
    await tick(0)
    expect(await op.done).toMatchObject({ waitReason: 'stdin_read', exitCode: 1 })
    return opened
  }

  it('the shell was killed before the next send: that send reports no exit status', async () => {
    const { fake, session } = await afterFalse()
    fake.finish({ exitCode: null, signal: 'SIGKILL' })
    await tick(0)
    const op = session.startSend({ text: 'rm -rf important', submit: true })
    expect(await op.done).toEqual({
      viewport: '',
      waitReason: 'session_exit',
      sessionStatus: { kind: 'exited', exitCode: null, signal: 'SIGKILL' },
      truncated: false,
    })
    expect(fake.writes).toEqual(['false\r'])
  })

  it('the shell dies during the pre-write inspection: no write, no exit status', async () => {
    const { fake, session } = await afterFalse()
    disturb(fake)
    fake.holdInspections = true
    const op = session.startSend({ text: 'rm -rf important', submit: true })
    await tick(0)
    fake.finish({ exitCode: null, signal: 'SIGKILL' })
    for (const held of fake.heldInspections) held.resolve()
    await tick(0)
    const result = await op.done
    expect({ waitReason: result.waitReason, exitCode: result.exitCode }).toEqual({ waitReason: 'session_exit', exitCode: undefined })
    expect(fake.writes).toEqual(['false\r'])
  })

  it('the shell dies after the write without a prompt: no exit status', async () => {
    const { fake, session } = await afterFalse()
    const op = session.startSend({ text: 'kill -9 $$', submit: true })
    fake.emit('kill -9 $$\r\n')
    fake.finish({ exitCode: null, signal: 'SIGKILL' })
    await tick(0)
    expect(await op.done).toMatchObject({ waitReason: 'session_exit', viewport: 'kill -9 $$\n' })
    expect((await op.done).exitCode).toBeUndefined()
  })

  it('an empty send does not repeat a status an earlier send already reported', async () => {
    const { session } = await afterFalse()
    const op = session.startSend({ text: '', submit: false })
    await tick(60)
    const result = await op.done
    // Still at the prompt `false` left: ready, but that status was already reported.
    expect({ waitReason: result.waitReason, exitCode: result.exitCode }).toEqual({ waitReason: 'stdin_read', exitCode: undefined })
  })

  it('an empty send reports a command that ended after the previous send settled', async () => {
    const { fake, session } = await openFake({ timeoutMs: 100 })
    fake.foreground = childBlocked()
    const slow = session.startSend({ text: 'sleep 1; false', submit: true })
    fake.emit('sleep 1; false\r\n')
    await tick(100)
    expect(await slow.done).toMatchObject({ waitReason: 'timeout' })
    expect((await slow.done).exitCode).toBeUndefined()
    // The command ends while no send waits for it; the next wait is the one to say how it ended.
    fake.foreground = shellWaiting(60)
    fake.emit(prompt(1))
    const op = session.startSend({ text: '', submit: false })
    await tick(60)
    expect(await op.done).toMatchObject({ waitReason: 'stdin_read', exitCode: 1 })
  })
})

describe('output consumption', () => {
  it('readOutput consumes a moving cursor and a settled send takes no more output', async () => {
    const { fake, session } = await openFake()
    fake.foreground = childBlocked()
    const op = session.startSend({ text: 'build', submit: true })
    await tick(0)
    fake.emit('build\r\nstep 1\r\n')
    expect(op.readOutput()).toEqual({ delta: 'build\nstep 1\n', truncated: false })
    fake.emit('step 2\r\n')
    fake.foreground = shellWaiting(70)
    fake.emit(prompt(0))
    await tick(5)
    expect(await op.done).toMatchObject({ viewport: 'step 2\ndsh> ' })
    fake.emit('background noise\r\n')
    expect(op.readOutput()).toEqual({ delta: '', truncated: false })
    expect(session.read({ count: 2 }).text).toBe('step 2\ndsh> background noise')
  })
})
