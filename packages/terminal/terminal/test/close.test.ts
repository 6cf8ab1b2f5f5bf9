import { describe, expect, it } from 'vitest'
import { flush, outcome, setup, StubBackend, summary } from './helpers'

async function opened() {
  const h = await setup()
  const backend = new StubBackend()
  h.terminals.registerBackend(backend)
  const alice = await h.agent('alice')
  const { sessionId } = await h.terminals.spawn(alice, { type: 'shell', name: 'main' })
  const session = backend.sessions[0]!
  return { h, alice, sessionId, session }
}

describe('close', () => {
  it('closes with the given reason, forgets the session, and is NO_SESSION afterwards', async () => {
    const { h, alice, sessionId, session } = await opened()
    expect(await h.terminals.close(alice, sessionId, 'tool request')).toBe(true)
    expect(session.closes).toEqual(['tool request'])
    expect(h.terminals.list(alice)).toEqual([])
    expect(h.terminals.hasOwnerActivity(alice)).toBe(false)
    const again = await outcome(h.terminals.close(alice, sessionId))
    expect(again.ok ? 'resolved' : summary(again.error)).toEqual({
      name: 'TerminalError',
      code: 'NO_SESSION',
      message: `unknown PTY session ${sessionId}`,
    })
  })

  it('two concurrent kills share one close: the first returns true, the second false, both after it ends', async () => {
    const { h, alice, sessionId, session } = await opened()
    session.closeGate = []
    const settled: string[] = []
    const first = h.terminals.close(alice, sessionId).then((value) => (settled.push(`first:${value}`), value))
    const second = h.terminals.close(alice, sessionId).then((value) => (settled.push(`second:${value}`), value))
    await flush()
    expect(session.closes).toEqual(['model request'])
    expect(settled).toEqual([])
    expect(h.terminals.hasOwnerActivity(alice)).toBe(true)
    session.closeGate[0]!.resolve()
    expect([await first, await second]).toEqual([true, false])
    expect(h.terminals.list(alice)).toEqual([])
  })

  it('a failed close is reported, keeps the session, and a later kill retries', async () => {
    const { h, alice, sessionId, session } = await opened()
    session.closeGate = []
    const first = outcome(h.terminals.close(alice, sessionId))
    const joined = outcome(h.terminals.close(alice, sessionId))
    await flush()
    session.closeGate[0]!.reject(new Error('terminal cleanup failed; surviving pids: 12'))
    const [a, b] = await Promise.all([first, joined])
    expect([a, b].map((r) => (r.ok ? 'resolved' : summary(r.error).message))).toEqual([
      'terminal cleanup failed; surviving pids: 12',
      'terminal cleanup failed; surviving pids: 12',
    ])
    expect(h.terminals.list(alice).map((s) => s.sessionId)).toEqual([sessionId])
    expect(h.terminals.hasOwnerActivity(alice)).toBe(true)

    const retry = h.terminals.close(alice, sessionId)
    await flush()
    session.closeGate[1]!.resolve()
    expect(await retry).toBe(true)
    expect(session.closes).toEqual(['model request', 'model request'])
    expect(h.terminals.hasOwnerActivity(alice)).toBe(false)
  })

  it('a newer attempt is never disturbed by an older failure', async () => {
    const { h, alice, sessionId, session } = await opened()
    session.closeGate = []
    const older = outcome(h.terminals.close(alice, sessionId, 'older'))
    await flush()
    session.closeGate[0]!.reject(new Error('older failed'))
    expect((await older).ok).toBe(false)
    const newer = h.terminals.close(alice, sessionId, 'newer')
    await flush()
    // the old failure is fully processed; the newer attempt still owns the fence
    const joiner = h.terminals.close(alice, sessionId, 'joiner')
    expect(() => h.terminals.startSend(alice, sessionId, { text: 'x', submit: true })).toThrow(/is closing/)
    session.closeGate[1]!.resolve()
    expect([await newer, await joiner]).toEqual([true, false])
    expect(session.closes).toEqual(['older', 'newer'])
  })

  it('a close that throws synchronously is a retriable rejection', async () => {
    const { h, alice, sessionId, session } = await opened()
    let fail = true
    const original = session.close.bind(session)
    session.close = (reason: string) => {
      if (fail) throw new Error('sync close failure')
      return original(reason)
    }
    const first = await outcome(h.terminals.close(alice, sessionId))
    expect(first.ok ? 'resolved' : summary(first.error).message).toBe('sync close failure')
    fail = false
    expect(await h.terminals.close(alice, sessionId)).toBe(true)
  })
})
