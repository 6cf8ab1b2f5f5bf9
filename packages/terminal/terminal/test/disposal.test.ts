import { AgentDisposeError } from 'dsh-agent'
import { describe, expect, it } from 'vitest'
import { flush, outcome, setup, StubBackend, type StubSession, summary } from './helpers'

async function twoOwners() {
  const h = await setup()
  const backend = new StubBackend()
  h.terminals.registerBackend(backend)
  const alice = await h.agent('alice')
  const bob = await h.agent('bob')
  const a1 = await h.terminals.spawn(alice, { type: 'shell', name: 'one' })
  const a2 = await h.terminals.spawn(alice, { type: 'shell', name: 'two' })
  const b1 = await h.terminals.spawn(bob, { type: 'shell', name: 'one' })
  const [s1, s2, s3] = backend.sessions
  const sessions: [StubSession, StubSession, StubSession] = [s1!, s2!, s3!]
  return { h, backend, alice, bob, ids: [a1.sessionId, a2.sessionId, b1.sessionId], sessions }
}

function messages(error: unknown): string[] {
  if (error instanceof AggregateError) return error.errors.map((inner) => summary(inner).message)
  return [summary(error).message]
}

describe('owner disposal', () => {
  it("closes exactly the owner's sessions and Agent.dispose waits for the closes", async () => {
    const { h, alice, bob, sessions } = await twoOwners()
    sessions[0].closeGate = []
    let disposed = false
    const disposing = alice.dispose().then(() => (disposed = true))
    await flush()
    expect(sessions.map((s) => s.closes)).toEqual([['PTY owner disposed'], ['PTY owner disposed'], []])
    expect(disposed).toBe(false)
    expect(h.terminals.hasOwnerActivity(alice)).toBe(true)
    sessions[0].closeGate[0]!.resolve()
    await disposing
    expect(h.terminals.hasOwnerActivity(alice)).toBe(false)
    expect(h.terminals.list(bob).map((s) => s.name)).toEqual(['one'])
  })

  it('joins a kill already in flight instead of closing twice', async () => {
    const { h, alice, ids, sessions } = await twoOwners()
    sessions[0].closeGate = []
    const killing = h.terminals.close(alice, ids[0]!)
    const disposing = alice.dispose()
    await flush()
    expect(sessions[0].closes).toEqual(['model request'])
    sessions[0].closeGate[0]!.resolve()
    expect(await killing).toBe(true)
    await disposing
  })

  it('reports a failing close through Agent.dispose; the session stays activity until service disposal retries it', async () => {
    const { h, alice, ids, sessions } = await twoOwners()
    sessions[1].closeGate = []
    const disposing = outcome(alice.dispose())
    await flush()
    sessions[1].closeGate[0]!.reject(new Error('surviving pids: 31'))
    const disposed = await disposing
    expect(disposed.ok).toBe(false)
    const error = (disposed as { error: unknown }).error
    expect(error).toBeInstanceOf(AgentDisposeError)
    expect((error as AgentDisposeError).errors.map((inner) => summary(inner))).toEqual([{ name: 'Error', message: 'surviving pids: 31' }])
    expect(h.terminals.hasOwnerActivity(alice)).toBe(true)
    expect(sessions[0].closes).toEqual(['PTY owner disposed'])

    // the owner is gone, so only the service can retry; this time the close succeeds
    const serviceDisposal = h.terminalFiber.dispose()
    await flush()
    sessions[1].closeGate[1]!.resolve()
    await serviceDisposal
    expect(sessions[1].closes).toEqual(['PTY owner disposed', 'PTY service disposed'])
    expect(h.errors).toEqual([])
    expect(h.terminals.hasOwnerActivity(alice)).toBe(false)
    expect(ids.length).toBe(3)
  })

  it('reports several failures of one owner together', async () => {
    const { alice, sessions } = await twoOwners()
    sessions[0].closeGate = []
    sessions[1].closeGate = []
    const disposing = outcome(alice.dispose())
    await flush()
    sessions[0].closeGate[0]!.reject(new Error('first'))
    sessions[1].closeGate[0]!.reject(new Error('second'))
    const disposed = await disposing
    const inner = disposed.ok ? [] : (disposed.error as AgentDisposeError).errors
    expect(inner.length).toBe(1)
    expect(summary(inner[0]).message).toBe('PTY cleanup of agent alice failed: first; second')
    expect(messages(inner[0])).toEqual(['first', 'second'])
  })
})

describe('service disposal', () => {
  it('closes every session, reports every failure together and still clears all registries', async () => {
    const { h, alice, bob, sessions } = await twoOwners()
    const terminals = h.terminals
    sessions[0].closeGate = []
    sessions[2].closeGate = []
    const disposing = h.terminalFiber.dispose()
    await flush()
    expect(sessions.map((s) => s.closes)).toEqual([['PTY service disposed'], ['PTY service disposed'], ['PTY service disposed']])
    sessions[0].closeGate[0]!.reject(new Error('alice close failed'))
    sessions[2].closeGate[0]!.reject(new Error('bob close failed'))
    await disposing
    // the effect rejects with one AggregateError; Cordis logs each of its failures
    expect(h.errors.map((error) => summary(error).message)).toEqual(['alice close failed', 'bob close failed'])

    expect(terminals.listBackends()).toEqual([])
    expect([terminals.hasOwnerActivity(alice), terminals.hasOwnerActivity(bob)]).toEqual([false, false])
    const refused = await outcome(terminals.spawn(alice, { type: 'shell' }))
    expect(refused.ok ? 'resolved' : summary(refused.error).code).toBe('SERVICE_DISPOSING')
    expect(() => terminals.registerBackend(new StubBackend('other'))).toThrow('PTY service is disposing')
    expect(() => terminals.list(alice)).toThrow('PTY service is disposing')
  })

  it('detaches owner hooks: a later Agent.dispose closes nothing and reports nothing', async () => {
    const { h, alice, sessions } = await twoOwners()
    await h.terminalFiber.dispose()
    await alice.dispose()
    expect(sessions[0].closes).toEqual(['PTY service disposed'])
    expect(h.errors).toEqual([])
  })

  it('unloading dsh-agent ends every owner and the service: each session is closed exactly once', async () => {
    const { h, sessions } = await twoOwners()
    const agentsFiber = [...h.root.registry.values()].flatMap((runtime) => [...runtime.fibers]).find((fiber) => fiber.name === 'dsh-agent')
    expect(agentsFiber === undefined).toBe(false)
    await agentsFiber!.dispose()
    await flush()
    expect(sessions.map((s) => s.closes.length)).toEqual([1, 1, 1])
    expect(h.errors).toEqual([])
  })
})
