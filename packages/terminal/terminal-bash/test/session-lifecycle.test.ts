import { SubprocessError } from 'dsh-subprocess'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { parseConfig } from '../src/config'
import { ShellSession } from '../src/session/shell-session'
import { childBlocked, FakeTerminal, NONCE, prompt, SHELL_PID } from './support/fake-terminal'
import { FAKE_CONFIG, openFake, tick } from './support/fake-session'

beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
})

async function failure(promise: Promise<unknown>): Promise<{ name?: string; code?: string; message: string }> {
  try {
    await promise
  } catch (error) {
    const e = error as Error & { code?: string }
    return { name: e.name, ...(e.code ? { code: e.code } : {}), message: e.message }
  }
  throw new Error('expected a rejection')
}

describe('startup failures', () => {
  it('an exit during startup rejects with STARTUP_EXITED', async () => {
    const fake = new FakeTerminal()
    const session = new ShellSession(fake, parseConfig(FAKE_CONFIG), { nonce: NONCE })
    fake.emit('bash: fatal\r\n')
    const outcome = failure(session.startup(new AbortController().signal))
    fake.finish({ exitCode: 2, signal: null })
    await tick(1)
    expect(await outcome).toEqual({ name: 'ShellBackendError', code: 'STARTUP_EXITED', message: 'PTY shell exited during startup: bash: fatal' })
  })

  it('zero-output silence never counts at startup: it times out', async () => {
    const fake = new FakeTerminal()
    fake.foreground = childBlocked(SHELL_PID)
    const session = new ShellSession(fake, parseConfig(FAKE_CONFIG), { nonce: NONCE })
    const started = session.startup(new AbortController().signal)
    const outcome = failure(started)
    await tick(10_000)
    expect(await outcome).toEqual({ name: 'ShellBackendError', code: 'STARTUP_TIMEOUT', message: 'PTY shell did not reach readiness before startup timeout' })
  })

  it('output then silence counts at startup (a shell without the marker)', async () => {
    const fake = new FakeTerminal()
    fake.foreground = childBlocked(SHELL_PID)
    const session = new ShellSession(fake, parseConfig(FAKE_CONFIG), { nonce: NONCE })
    fake.emit('$ ')
    const started = session.startup(new AbortController().signal)
    await tick(3_100)
    await started
    expect(session.motd).toBe('$ ')
  })

  it('a caller abort rejects with exactly its reason', async () => {
    const fake = new FakeTerminal()
    const session = new ShellSession(fake, parseConfig(FAKE_CONFIG), { nonce: NONCE })
    const caller = new AbortController()
    const started = session.startup(caller.signal)
    const reason = new Error('caller gave up')
    caller.abort(reason)
    await expect(started).rejects.toBe(reason)
  })
})

describe('close', () => {
  it('settles an active send as session_exit, tears down, and is idempotent', async () => {
    const { fake, session } = await openFake()
    fake.foreground = childBlocked()
    const op = session.startSend({ text: 'sleep 100', submit: true })
    await tick(5)
    const first = session.close('model request')
    const second = session.close('again')
    expect(second).toBe(first)
    await first
    expect(await op.done).toMatchObject({ waitReason: 'session_exit' })
    expect(fake.terminateCalls).toBe(1)
    await session.close('after')
    expect(fake.terminateCalls).toBe(1)
    expect(() => session.startSend({ text: 'echo', submit: true })).toThrow(expect.objectContaining({ code: 'SESSION_CLOSED' }))
    expect(await failure(session.signal('SIGINT'))).toMatchObject({ code: 'SESSION_CLOSED' })
  })

  it('a failed close reports the survivors and can be retried', async () => {
    const { fake, session } = await openFake()
    fake.failTerminate = new SubprocessError('CLEANUP_FAILED', 'terminal cleanup failed; surviving pids: 77')
    expect(await failure(session.close('first'))).toMatchObject({ code: 'CLEANUP_FAILED', message: 'terminal cleanup failed; surviving pids: 77' })
    fake.failTerminate = undefined
    await session.close('retry')
    expect(fake.terminateCalls).toBe(2)
    expect(session.status()).toMatchObject({ kind: 'exited' })
  })
})

describe('signal and read', () => {
  it('signals the foreground group and surfaces the provider’s refusal', async () => {
    const { fake, session } = await openFake()
    fake.foreground = childBlocked(5000)
    expect(await session.signal('SIGTERM')).toEqual({ delivered: true, targetPgid: 5000 })
    fake.foreground = undefined
    fake.foreground = { pgid: SHELL_PID, shell: true, threads: [] }
    expect(await failure(session.signal('SIGKILL'))).toMatchObject({ name: 'SubprocessError', code: 'REFUSED_SHELL_KILL' })
  })

  it('pages the scrollback by absolute line numbers that survive eviction', async () => {
    const { fake, session } = await openFake({ scrollbackLines: 5 })
    fake.emit('l1\r\nl2\r\nl3\r\nl4\r\nl5\r\nl6\r\n')
    fake.emit(prompt(0))
    // Lines: 1 `welcome`, 2 `dsh> l1`, 3…7 `l2`…`l6`, 8 the current `dsh> `. Five completed lines
    // are retained (3…7) plus the current one, so lines 1 and 2 are gone and 3 is the oldest.
    expect(session.read({})).toEqual({ text: 'l2\nl3\nl4\nl5\nl6\ndsh> ', totalLines: 8, lineBegin: 3, lineEnd: 8, oldestLine: 3, truncated: true })
    expect(session.read({ count: 6 })).toMatchObject({ lineBegin: 3, lineEnd: 8, truncated: false })
    expect(session.read({ offset: 1, count: 2 })).toEqual({ text: 'l5\nl6', totalLines: 8, lineBegin: 6, lineEnd: 7, oldestLine: 3, truncated: false })
    expect(session.read({ offset: 4, count: 5 })).toMatchObject({ text: 'l2\nl3', lineBegin: 3, lineEnd: 4, truncated: true })
    expect(session.read({ offset: 50, count: 5 })).toMatchObject({ text: '', lineBegin: 0, lineEnd: 0 })
    // Forward: the same numbers; a window that reaches evicted lines starts at the oldest one.
    expect(session.read({ fromLine: 4, count: 2 })).toEqual({ text: 'l3\nl4', totalLines: 8, lineBegin: 4, lineEnd: 5, oldestLine: 3, truncated: false })
    expect(session.read({ fromLine: 1, count: 3 })).toMatchObject({ text: 'l2', lineBegin: 3, lineEnd: 3, truncated: true })
    expect(session.read({ fromLine: 1, count: 2 })).toMatchObject({ text: '', lineBegin: 0, lineEnd: 0, truncated: true })
    expect(session.read({ fromLine: 7 })).toMatchObject({ text: 'l6\ndsh> ', lineBegin: 7, lineEnd: 8, truncated: false })
    expect(session.read({ fromLine: 9 })).toEqual({ text: '', totalLines: 8, lineBegin: 0, lineEnd: 0, oldestLine: 3, truncated: false })
  })

  it('bounds a page by maxReadBytes', async () => {
    const { fake, session } = await openFake({ maxReadBytes: 10, scrollbackMaxBytes: 1000 })
    fake.emit('0123456789abcdef\r\n')
    // The prompt was on the current line, so the completed line is `dsh> 0123456789abcdef`.
    expect(session.read({ count: 1 })).toMatchObject({ text: '6789abcdef', truncated: true })
    expect(session.read({ count: 2, offset: 1 })).toMatchObject({ text: 'welcome', truncated: false })
    // Forward pages keep whole lines from their start; only a line longer than the cap alone is cut, at its head.
    expect(session.read({ fromLine: 1, count: 2 })).toMatchObject({ text: 'welcome', lineBegin: 1, lineEnd: 1, truncated: false })
    expect(session.read({ fromLine: 2, count: 2 })).toMatchObject({ text: 'dsh> 01234', lineBegin: 2, lineEnd: 2, truncated: true })
  })
})
