import { AgentDisposeError } from 'dsh-agent'
import { TerminalBackendCleanupError, TerminalError } from 'dsh-terminal'
import { describe, expect, it } from 'vitest'
import { flush, outcome, setup, StubBackend, summary } from './helpers'

async function held() {
  const h = await setup()
  const backend = new StubBackend('shell', false)
  h.terminals.registerBackend(backend)
  const alice = await h.agent('alice')
  return { h, backend, alice }
}

describe('caller cancellation of an unpublished spawn', () => {
  it('the exact caller reason wins over the backend rejection', async () => {
    const { h, backend, alice } = await held()
    const caller = new AbortController()
    const spawning = outcome(h.terminals.spawn(alice, { type: 'shell' }, caller.signal))
    const reason = new Error('user pressed escape')
    caller.abort(reason)
    expect(backend.calls[0]!.aborted()).toBe(true)
    backend.calls[0]!.result.reject(new Error('backend saw abort and failed differently'))
    const result = await spawning
    expect(!result.ok && result.error === reason).toBe(true)
    expect(h.terminals.hasOwnerActivity(alice)).toBe(false)
  })

  it('a non-Error abort reason is surfaced as is', async () => {
    const { h, backend, alice } = await held()
    const caller = new AbortController()
    const spawning = outcome(h.terminals.spawn(alice, { type: 'shell' }, caller.signal))
    caller.abort('plain string reason')
    backend.calls[0]!.result.reject(new Error('x'))
    expect(await spawning).toEqual({ ok: false, error: 'plain string reason' })
  })

  it('a session returned after the caller aborted is rolled back and the caller reason wins', async () => {
    const { h, backend, alice } = await held()
    const caller = new AbortController()
    const spawning = outcome(h.terminals.spawn(alice, { type: 'shell', name: 'main' }, caller.signal))
    const reason = new Error('cancelled')
    caller.abort(reason)
    const session = backend.calls[0]!.session()
    backend.calls[0]!.result.resolve(session)
    const result = await spawning
    expect(!result.ok && result.error === reason).toBe(true)
    expect(session.closes).toEqual(['PTY spawn rolled back'])
    expect(h.terminals.list(alice)).toEqual([])
    expect(h.terminals.hasOwnerActivity(alice)).toBe(false)
  })

  it('a failed rollback keeps the caller reason and stays owner activity until owner disposal reports it', async () => {
    const { h, backend, alice } = await held()
    const caller = new AbortController()
    const spawning = outcome(h.terminals.spawn(alice, { type: 'shell' }, caller.signal))
    const reason = new Error('cancelled')
    caller.abort(reason)
    const session = backend.calls[0]!.session()
    session.closeGate = []
    backend.calls[0]!.result.resolve(session)
    await flush()
    session.closeGate[0]!.reject(new Error('surviving pids: 77'))
    const result = await spawning
    expect(!result.ok && result.error === reason).toBe(true)
    expect(h.terminals.hasOwnerActivity(alice)).toBe(true)
    expect(h.terminals.list(alice)).toEqual([])
    const disposed = await outcome(alice.dispose())
    expect(disposed.ok).toBe(false)
    const error = (disposed as { error: unknown }).error
    expect(error).toBeInstanceOf(AgentDisposeError)
    expect((error as AgentDisposeError).errors.map(summary)).toEqual([{ name: 'Error', message: 'surviving pids: 77' }])
    expect(h.terminals.hasOwnerActivity(alice)).toBe(false)
  })

  it('a backend cleanup failure keeps the caller reason and is reported by service disposal', async () => {
    const { h, backend, alice } = await held()
    const caller = new AbortController()
    const spawning = outcome(h.terminals.spawn(alice, { type: 'shell' }, caller.signal))
    const reason = new Error('cancelled')
    caller.abort(reason)
    const cleanupError = new Error('could not kill the half-started shell')
    backend.calls[0]!.result.reject(new TerminalBackendCleanupError(reason, cleanupError))
    const result = await spawning
    expect(!result.ok && result.error === reason).toBe(true)
    expect(h.terminals.hasOwnerActivity(alice)).toBe(true)
    await h.terminalFiber.dispose()
    expect(h.errors.length).toBe(1)
    expect(h.errors[0] === cleanupError).toBe(true)
  })

  it('without any abort, a backend cleanup failure rejects with that error and stays owner activity', async () => {
    const { h, backend, alice } = await held()
    const spawning = outcome(h.terminals.spawn(alice, { type: 'shell' }))
    const error = new TerminalBackendCleanupError(new Error('startup timeout'), new Error('teardown failed'))
    backend.calls[0]!.result.reject(error)
    const result = await spawning
    expect(!result.ok && result.error === error).toBe(true)
    expect(summary(error)).toEqual({ name: 'TerminalBackendCleanupError', message: 'PTY spawn failed and its cleanup failed too: teardown failed' })
    expect(h.terminals.hasOwnerActivity(alice)).toBe(true)
    const disposed = await outcome(alice.dispose())
    expect(disposed.ok ? [] : (disposed.error as AgentDisposeError).errors.map(summary)).toEqual([{ name: 'Error', message: 'teardown failed' }])
  })
})

describe('owner disposed mid-spawn', () => {
  it('aborts the setup with OWNER_NOT_LIVE and Agent.dispose waits for the backend to settle', async () => {
    const { h, backend, alice } = await held()
    const spawning = outcome(h.terminals.spawn(alice, { type: 'shell', name: 'main' }))
    const order: string[] = []
    const disposing = alice.dispose().then(() => order.push('agent disposed'))
    await flush()
    const signal = backend.calls[0]!.spec.signal
    expect(signal.aborted).toBe(true)
    expect(signal.reason instanceof TerminalError && signal.reason.code).toBe('OWNER_NOT_LIVE')
    expect(order).toEqual([])
    expect(h.terminals.hasOwnerActivity(alice)).toBe(true)
    order.push('backend settles')
    backend.calls[0]!.result.reject(signal.reason)
    await disposing
    expect(order).toEqual(['backend settles', 'agent disposed'])
    const result = await spawning
    expect(result.ok ? 'resolved' : summary(result.error)).toEqual({
      name: 'TerminalError',
      code: 'OWNER_NOT_LIVE',
      message: 'agent alice is not a live PTY owner',
    })
    expect(h.terminals.hasOwnerActivity(alice)).toBe(false)
  })

  it('rolls back a session the backend returned anyway, before Agent.dispose resolves', async () => {
    const { h, backend, alice } = await held()
    const spawning = outcome(h.terminals.spawn(alice, { type: 'shell' }))
    const disposing = outcome(alice.dispose())
    await flush()
    const session = backend.calls[0]!.session()
    session.closeGate = []
    backend.calls[0]!.result.resolve(session)
    await flush()
    expect(session.closes).toEqual(['PTY spawn rolled back'])
    let done = false
    void disposing.then(() => (done = true))
    await flush()
    expect(done).toBe(false)
    session.closeGate[0]!.resolve()
    expect((await disposing).ok).toBe(true)
    const result = await spawning
    expect(result.ok ? 'resolved' : summary(result.error).code).toBe('OWNER_NOT_LIVE')
    expect(h.terminals.hasOwnerActivity(alice)).toBe(false)
  })

  it('a failed lifecycle rollback rejects both the spawn and the disposing owner', async () => {
    const { h, backend, alice } = await held()
    const spawning = outcome(h.terminals.spawn(alice, { type: 'shell' }))
    const disposing = outcome(alice.dispose())
    await flush()
    const session = backend.calls[0]!.session()
    session.closeGate = []
    backend.calls[0]!.result.resolve(session)
    await flush()
    session.closeGate[0]!.reject(new Error('rollback failed'))
    const result = await spawning
    expect(result.ok).toBe(false)
    const error = (result as { error: unknown }).error
    expect(error).toBeInstanceOf(AggregateError)
    expect(summary(error).message).toBe('PTY spawn and rollback both failed')
    expect((error as AggregateError).errors.map((inner) => summary(inner).message)).toEqual(['agent alice is not a live PTY owner', 'rollback failed'])
    const disposed = await disposing
    expect(disposed.ok ? [] : (disposed.error as AgentDisposeError).errors.map(summary)).toEqual([{ name: 'Error', message: 'rollback failed' }])
    expect(h.terminals.hasOwnerActivity(alice)).toBe(false)
  })

  it('a caller abort still wins when the owner is disposed and the rollback fails', async () => {
    const { h, backend, alice } = await held()
    const caller = new AbortController()
    const spawning = outcome(h.terminals.spawn(alice, { type: 'shell' }, caller.signal))
    const disposing = outcome(alice.dispose())
    await flush()
    const session = backend.calls[0]!.session()
    session.closeGate = []
    backend.calls[0]!.result.resolve(session)
    await flush()
    const reason = new Error('caller gave up during rollback')
    caller.abort(reason)
    session.closeGate[0]!.reject(new Error('rollback failed'))
    const result = await spawning
    expect(!result.ok && result.error === reason).toBe(true)
    const disposed = await disposing
    expect(disposed.ok ? [] : (disposed.error as AgentDisposeError).errors.map((e) => summary(e).message)).toEqual(['rollback failed'])
  })

  it('a lifecycle abort with a backend cleanup failure rejects with both and reports the cleanup to the owner', async () => {
    const { h, backend, alice } = await held()
    const spawning = outcome(h.terminals.spawn(alice, { type: 'shell' }))
    const disposing = outcome(alice.dispose())
    await flush()
    const signal = backend.calls[0]!.spec.signal
    const cleanupError = new Error('half-started shell survived')
    backend.calls[0]!.result.reject(new TerminalBackendCleanupError(signal.reason, cleanupError))
    const result = await spawning
    expect(result.ok ? [] : (result.error as AggregateError).errors.map((e) => summary(e).message)).toEqual([
      'agent alice is not a live PTY owner',
      'half-started shell survived',
    ])
    const disposed = await disposing
    expect(disposed.ok ? [] : (disposed.error as AgentDisposeError).errors.map((e) => summary(e).message)).toEqual(['half-started shell survived'])
    expect(h.terminals.hasOwnerActivity(alice)).toBe(false)
  })
})

describe('service disposed mid-spawn', () => {
  it('aborts with SERVICE_DISPOSING and waits for the backend before the service is gone', async () => {
    const { h, backend, alice } = await held()
    const spawning = outcome(h.terminals.spawn(alice, { type: 'shell' }))
    let disposed = false
    const disposing = h.terminalFiber.dispose().then(() => (disposed = true))
    await flush()
    const signal = backend.calls[0]!.spec.signal
    expect(signal.reason instanceof TerminalError && signal.reason.code).toBe('SERVICE_DISPOSING')
    expect(disposed).toBe(false)
    backend.calls[0]!.result.reject(new Error('aborted'))
    await disposing
    const result = await spawning
    expect(result.ok ? 'resolved' : summary(result.error)).toEqual({
      name: 'TerminalError',
      code: 'SERVICE_DISPOSING',
      message: 'PTY service is disposing',
    })
    expect(h.errors).toEqual([])
  })
})
