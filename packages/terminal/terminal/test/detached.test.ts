import { eventually } from 'dsh-testkit'
import { asTerminalSessionId, DETACHED_EXPIRED_REASON, type TerminalBackendSession } from 'dsh-terminal'
import { describe, expect, it } from 'vitest'
import { flush, setup, StubBackend, type StubSession, thrown } from './helpers'

const messageOf = (refusal: unknown) => (refusal as { message: string }).message

/** A stub session that counts releases of its running send, as the shell backend's `release`. */
function releasing(session: StubSession): StubSession & { releases: number } {
  const counted = session as StubSession & { releases: number } & Pick<TerminalBackendSession, 'release'>
  counted.releases = 0
  counted.release = () => {
    counted.releases++
    counted.sends.at(-1)?.finish('released')
  }
  return counted
}

async function detachedStack(detachedTtlMs: number) {
  const h = await setup({ detachedTtlMs })
  const backend = new StubBackend()
  h.terminals.registerBackend(backend)
  const alice = await h.agent('alice')
  const bob = await h.agent('bob')
  const carol = await h.agent('carol')
  const opened = await h.terminals.spawn(alice, { type: 'shell', name: 'build' })
  const session = releasing(backend.sessions[0] as StubSession)
  return { h, alice, bob, carol, id: opened.sessionId, session }
}

describe('detached sessions (detachedTtlMs > 0)', () => {
  it("keeps an ended owner's session, lists it to every live owner, and lets exactly one resume it", async () => {
    const { h, alice, bob, carol, id, session } = await detachedStack(600_000)
    const send = h.terminals.startSend(alice, id, { text: 'sleep 1', submit: true })
    await alice.dispose()
    expect(session.closes).toEqual([])
    // The running send was released, not cancelled: no SIGINT.
    expect(session.releases).toBe(1)
    expect(session.sends[0]?.cancelled).toBe(0)
    expect((await send.done).viewport).toBe('released')

    const listed = h.terminals.list(bob)
    expect(listed.map((s) => [s.sessionId, s.name, typeof s.detachedAt])).toEqual([[id, 'build', 'number']])
    expect(h.terminals.list(carol).map((s) => s.sessionId)).toEqual([id])
    expect(thrown(() => h.terminals.startSend(bob, id, { text: 'x', submit: true }))).toMatchObject({ code: 'NO_SESSION' })
    expect(messageOf(thrown(() => h.terminals.startSend(bob, id, { text: 'x', submit: true })))).toContain('resume')

    // Both calls start before either awaits: the first wins synchronously.
    const first = h.terminals.resume(bob, id, 'shell')
    expect(thrown(() => h.terminals.resume(carol, id, 'shell'))).toMatchObject({ code: 'SESSION_ADOPTED' })
    const snapshot = await first
    expect(snapshot.detachedAt).toBeUndefined()
    expect(h.terminals.list(bob).map((s) => [s.sessionId, s.detachedAt])).toEqual([[id, undefined]])
    expect(h.terminals.list(carol)).toEqual([])
    expect(thrown(() => h.terminals.startSend(carol, id, { text: 'x', submit: true }))).toMatchObject({ code: 'FOREIGN_SESSION' })
    const next = h.terminals.startSend(bob, id, { text: 'echo hi', submit: true })
    session.sends[1]?.finish('hi')
    expect((await next.done).viewport).toBe('hi')
    // Once adopted, the new owner's end detaches it again.
    await bob.dispose()
    expect(h.terminals.list(carol).map((s) => s.sessionId)).toEqual([id])
  })

  it('refuses a resume of an id that is not detached with NO_SESSION naming terminal_list', async () => {
    const { h, alice, bob, id } = await detachedStack(600_000)
    for (const [owner, what] of [
      [bob, asTerminalSessionId('pty-99')],
      [bob, id],
    ] as const) {
      const refusal = thrown(() => h.terminals.resume(owner, what, 'shell'))
      expect(refusal).toMatchObject({ code: 'NO_SESSION' })
      expect(messageOf(refusal)).toContain('terminal_list')
    }
    expect(messageOf(thrown(() => h.terminals.resume(alice, id, 'shell')))).toContain('already yours')
    await alice.dispose()
    expect(thrown(() => h.terminals.resume(bob, id, 'python'))).toMatchObject({ code: 'INVALID_REQUEST' })
  })

  it('closes a detached session that nobody resumed when its TTL passes', async () => {
    const { h, alice, bob, session } = await detachedStack(50)
    await alice.dispose()
    expect(h.terminals.list(bob)).toHaveLength(1)
    await eventually(() => session.closes.length > 0, 'the detached session closed at its TTL')
    expect(session.closes).toEqual([DETACHED_EXPIRED_REASON])
    await flush()
    expect(h.terminals.list(bob)).toEqual([])
  })

  it('closes detached sessions with the service', async () => {
    const { h, alice, session } = await detachedStack(600_000)
    await alice.dispose()
    await h.terminalFiber.dispose()
    expect(session.closes).toEqual(['PTY service disposed'])
  })

  it('with the default TTL of 0 closes at owner disposal and lists nothing detached', async () => {
    const { h, alice, bob, session } = await detachedStack(0)
    await alice.dispose()
    expect(session.closes).toEqual(['PTY owner disposed'])
    expect(session.releases).toBe(0)
    expect(h.terminals.list(bob)).toEqual([])
  })
})
