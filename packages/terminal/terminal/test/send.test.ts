import { asTerminalSessionId, type TerminalSendResult, type TerminalSessionId } from 'dsh-terminal'
import { LinePattern } from 'dsh-basics'
import { Deferred } from 'dsh-testkit'
import { describe, expect, it } from 'vitest'
import { flush, outcome, setup, StubBackend, summary, thrown } from './helpers'

async function opened() {
  const h = await setup()
  const backend = new StubBackend()
  h.terminals.registerBackend(backend)
  const alice = await h.agent('alice')
  const bob = await h.agent('bob')
  const { sessionId } = await h.terminals.spawn(alice, { type: 'shell', name: 'main' })
  const session = backend.sessions[0]!
  return { h, backend, alice, bob, sessionId, session }
}

describe('send reservation', () => {
  it('is taken synchronously: a second send is SEND_ACTIVE until the first settles', async () => {
    const { h, alice, sessionId, session } = await opened()
    const first = h.terminals.startSend(alice, sessionId, { text: 'sleep 1', submit: true })
    expect(thrown(() => h.terminals.startSend(alice, sessionId, { text: 'ls', submit: true }))).toEqual({
      name: 'TerminalError',
      code: 'SEND_ACTIVE',
      message: `PTY session ${sessionId} already has an active send`,
    })
    expect(first.readOutput()).toEqual({ delta: 'out:sleep 1', truncated: false })
    session.sends[0]!.finish('done')
    expect(await first.done).toEqual({
      viewport: 'done',
      waitReason: 'stdin_read',
      sessionStatus: { kind: 'running' },
      truncated: false,
      exitCode: 0,
    })
    // done settles only after the reservation was dropped: the next send is accepted at once
    const second = h.terminals.startSend(alice, sessionId, { text: 'ls', submit: false })
    expect(session.sends.map((send) => send.request)).toEqual([
      { text: 'sleep 1', submit: true },
      { text: 'ls', submit: false },
    ])
    // The second send is live: cancelling it reaches the backend's send.
    expect(second.cancel()).toBe(true)
    expect(session.sends[1]?.cancelled).toBe(1)
  })

  it("hands the backend's result through unchanged, outputHead included", async () => {
    const { h, alice, sessionId, session } = await opened()
    const send = h.terminals.startSend(alice, sessionId, { text: 'seq 1 300000', submit: true })
    const result: TerminalSendResult = {
      viewport: '299999\n300000\ndsh> ',
      waitReason: 'stdin_read',
      sessionStatus: { kind: 'running' },
      truncated: true,
      firstLine: 299_001,
      outputHead: { text: 'seq 1 300000\n1\n2', firstLine: 7, gapLines: 298_991, gapBytes: 1_958_880 },
      exitCode: 0,
    }
    session.sends[0]!.result.resolve(result)
    expect(await send.done).toEqual(result)
  })

  it('a failed send releases the reservation too', async () => {
    const { h, alice, sessionId, session } = await opened()
    const first = h.terminals.startSend(alice, sessionId, { text: 'x', submit: true })
    session.sends[0]!.result.reject(new Error('pty write failed'))
    const failed = await outcome(first.done)
    expect(failed.ok ? 'resolved' : summary(failed.error).message).toBe('pty write failed')
    await first.released
    expect(thrown(() => h.terminals.startSend(alice, sessionId, { text: 'y', submit: true }))).toBe('allowed')
  })

  it("a backend holds the reservation past done through the operation's released promise", async () => {
    const { h, alice, sessionId, session } = await opened()
    const signalled = new Deferred()
    session.hold = signalled.promise
    const first = h.terminals.startSend(alice, sessionId, { text: 'python3', submit: true })
    expect(first.cancel()).toBe(true)
    session.sends[0]!.finish('^C')
    let settled = false
    void first.done.then(() => (settled = true))
    let released = false
    void first.released.then(() => (released = true))
    await flush()
    // the cancelling SIGINT has not been delivered yet: no successor may become its target,
    // and the handle's done waits for the reservation too
    expect(thrown(() => h.terminals.startSend(alice, sessionId, { text: 'next', submit: true }))).toMatchObject({ code: 'SEND_ACTIVE' })
    expect({ settled, released }).toEqual({ settled: false, released: false })
    signalled.resolve()
    await first.done
    expect(thrown(() => h.terminals.startSend(alice, sessionId, { text: 'next', submit: true }))).toBe('allowed')
  })

  it('a rejected released promise still frees the session once done settled', async () => {
    const { h, alice, sessionId, session } = await opened()
    const hold = new Deferred()
    session.hold = hold.promise
    const first = h.terminals.startSend(alice, sessionId, { text: 'x', submit: true })
    session.sends[0]!.finish()
    hold.reject(new Error('signal delivery failed'))
    await first.released
    expect(thrown(() => h.terminals.startSend(alice, sessionId, { text: 'y', submit: true }))).toBe('allowed')
  })

  it('a backend whose startSend throws leaves no reservation behind', async () => {
    const { h, alice, sessionId, session } = await opened()
    session.startSend = () => {
      throw new Error('write side closed')
    }
    expect(thrown(() => h.terminals.startSend(alice, sessionId, { text: 'x', submit: true }))).toEqual({
      name: 'Error',
      message: 'write side closed',
    })
    delete (session as { startSend?: unknown }).startSend
    expect(thrown(() => h.terminals.startSend(alice, sessionId, { text: 'x', submit: true }))).toBe('allowed')
  })

  it('refuses while the session is closing', async () => {
    const { h, alice, sessionId, session } = await opened()
    session.closeGate = []
    const killing = h.terminals.close(alice, sessionId)
    expect(thrown(() => h.terminals.startSend(alice, sessionId, { text: 'x', submit: true }))).toEqual({
      name: 'TerminalError',
      code: 'NO_SESSION',
      message: `PTY session ${sessionId} is closing`,
    })
    const signalled = await outcome(h.terminals.signal(alice, sessionId, 'SIGINT'))
    expect(signalled.ok ? 'delivered' : summary(signalled.error).message).toBe(`PTY session ${sessionId} is closing`)
    await flush()
    session.closeGate[0]!.resolve()
    expect(await killing).toBe(true)
  })

  it('validates the request', async () => {
    const { h, alice, sessionId } = await opened()
    expect(thrown(() => h.terminals.startSend(alice, sessionId, { text: 1 as never, submit: true }))).toMatchObject({ code: 'INVALID_REQUEST' })
    expect(thrown(() => h.terminals.startSend(alice, sessionId, { text: 'x' } as never))).toMatchObject({ code: 'INVALID_REQUEST' })
    expect(thrown(() => h.terminals.startSend(alice, sessionId, { text: 'x', submit: true, settleOnSilence: 1 as never }))).toMatchObject({
      code: 'INVALID_REQUEST',
      message: 'PTY send settleOnSilence must be a boolean',
    })
    for (const timeoutMs of [0, 1.5, 2 ** 31]) {
      expect(thrown(() => h.terminals.startSend(alice, sessionId, { text: 'x', submit: true, timeoutMs }))).toMatchObject({
        code: 'INVALID_REQUEST',
        message: 'PTY send timeoutMs must be an integer from 1 to 2147483647',
      })
    }
  })

  it('takes waitFor only as a LinePattern: a RegExp (which backtracks on the host) or a look-alike is refused before the backend sees it', async () => {
    const { h, alice, sessionId, session } = await opened()
    const lookAlike = { source: '(a+)+$', firstMatch: (line: string) => /(a+)+$/.exec(line)?.[0] }
    for (const waitFor of [/(a+)+$/, lookAlike, '(a+)+$']) {
      expect(thrown(() => h.terminals.startSend(alice, sessionId, { text: 'x', submit: true, waitFor: waitFor as never }))).toMatchObject({
        code: 'INVALID_REQUEST',
        message: 'PTY send waitFor must be a LinePattern (LinePattern.compile from dsh-basics), not a RegExp',
      })
    }
    expect(session.sends).toEqual([])
    const waitFor = LinePattern.compile('(a+)+$')
    h.terminals.startSend(alice, sessionId, { text: 'x', submit: true, waitFor })
    expect(session.sends[0]?.request.waitFor).toBe(waitFor)
  })
})

describe('ownership of every session operation', () => {
  it('another agent gets FOREIGN_SESSION, an unknown id NO_SESSION, an empty id INVALID_REQUEST', async () => {
    const { h, alice, bob, sessionId, session } = await opened()
    const foreign = { name: 'TerminalError', code: 'FOREIGN_SESSION', message: `PTY session ${sessionId} belongs to another agent` }
    expect(thrown(() => h.terminals.startSend(bob, sessionId, { text: 'x', submit: true }))).toEqual(foreign)
    expect(thrown(() => h.terminals.read(bob, sessionId))).toEqual(foreign)
    expect(summary(((await outcome(h.terminals.signal(bob, sessionId, 'SIGINT'))) as { error: unknown }).error)).toEqual(foreign)
    expect(summary(((await outcome(h.terminals.close(bob, sessionId))) as { error: unknown }).error)).toEqual(foreign)
    expect(h.terminals.list(bob)).toEqual([])
    expect([session.sends.length, session.reads.length, session.signals.length, session.closes.length]).toEqual([0, 0, 0, 0])

    const unknown: TerminalSessionId = asTerminalSessionId('pty-99')
    expect(thrown(() => h.terminals.read(bob, unknown))).toEqual({ name: 'TerminalError', code: 'NO_SESSION', message: 'unknown PTY session pty-99' })
    expect(thrown(() => h.terminals.read(bob, asTerminalSessionId('')))).toEqual({
      name: 'TerminalError',
      code: 'INVALID_REQUEST',
      message: 'PTY session id must be a non-empty string',
    })
    // a display name is not an address; its owner is told the id, nobody else learns anything
    expect(thrown(() => h.terminals.read(bob, asTerminalSessionId('main')))).toEqual({
      name: 'TerminalError',
      code: 'NO_SESSION',
      message: 'unknown PTY session main',
    })
    expect(thrown(() => h.terminals.read(alice, asTerminalSessionId('main')))).toEqual({
      name: 'TerminalError',
      code: 'NO_SESSION',
      message: `unknown PTY session main; "main" is the name of session ${sessionId}, use its id`,
    })
  })
})

describe('read, signal and list', () => {
  it('read forwards a validated page request to the owned session', async () => {
    const { h, alice, sessionId, session } = await opened()
    expect(h.terminals.read(alice, sessionId, { offset: 10, count: 20 })).toEqual({
      text: 'line',
      totalLines: 1,
      lineBegin: 1,
      lineEnd: 1,
      oldestLine: 1,
      truncated: false,
    })
    h.terminals.read(alice, sessionId)
    h.terminals.read(alice, sessionId, { fromLine: 1, count: 5 })
    expect(session.reads).toEqual([{ offset: 10, count: 20 }, {}, { fromLine: 1, count: 5 }])
    expect(thrown(() => h.terminals.read(alice, sessionId, { count: -1 }))).toEqual({
      name: 'TerminalError',
      code: 'INVALID_REQUEST',
      message: 'PTY read count must be a non-negative integer',
    })
    expect(thrown(() => h.terminals.read(alice, sessionId, { offset: 1.5 }))).toMatchObject({ code: 'INVALID_REQUEST' })
  })

  it('refuses a fromLine that is not a positive integer, or that comes with an offset, before the backend sees it', async () => {
    const { h, alice, sessionId, session } = await opened()
    for (const fromLine of [0, -1, 1.5, Number.NaN, 2 ** 53, '3' as unknown as number]) {
      expect(thrown(() => h.terminals.read(alice, sessionId, { fromLine }))).toEqual({
        name: 'TerminalError',
        code: 'INVALID_REQUEST',
        message:
          'PTY read fromLine must be a positive integer: the absolute number of a line, 1 being the first line ' +
          'the session printed (the lineBegin, lineEnd and oldestLine of a read are such numbers)',
      })
    }
    for (const offset of [0, 3]) {
      expect(thrown(() => h.terminals.read(alice, sessionId, { fromLine: 2, offset }))).toEqual({
        name: 'TerminalError',
        code: 'INVALID_REQUEST',
        message:
          'PTY read takes fromLine or offset, not both: fromLine reads forward from that absolute line, offset reads back from the newest line; leave one out',
      })
    }
    expect(session.reads).toEqual([])
  })

  it('signal accepts only the closed set and returns the delivered group', async () => {
    const { h, alice, sessionId, session } = await opened()
    expect(await h.terminals.signal(alice, sessionId, 'SIGTSTP')).toEqual({ delivered: true, targetPgid: 4242 })
    const refused = await outcome(h.terminals.signal(alice, sessionId, 'SIGUSR1' as never))
    expect(refused.ok ? 'delivered' : summary(refused.error)).toEqual({
      name: 'TerminalError',
      code: 'INVALID_REQUEST',
      message: 'PTY signal must be one of SIGINT, SIGTERM, SIGKILL, SIGTSTP, SIGHUP',
    })
    expect(session.signals).toEqual(['SIGTSTP'])
  })

  it("lists only the owner's sessions, in publication order, with fresh status (exited included)", async () => {
    const { h, backend, alice, bob, sessionId } = await opened()
    const second = await h.terminals.spawn(alice, { type: 'shell' })
    await h.terminals.spawn(bob, { type: 'shell', name: 'main' })
    backend.sessions[0]!.state = { kind: 'exited', exitCode: 0, signal: null }
    expect(h.terminals.list(alice)).toEqual([
      { sessionId, name: 'main', type: 'shell', pid: 1001, status: { kind: 'exited', exitCode: 0, signal: null } },
      { sessionId: second.sessionId, type: 'shell', pid: 1002, status: { kind: 'running' } },
    ])
    expect(h.terminals.list(bob).map((s) => s.sessionId)).toEqual(['pty-3'])
    expect(h.terminals.hasOwnerActivity(alice)).toBe(true)
  })
})
