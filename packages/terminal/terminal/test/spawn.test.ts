import { Agent } from 'dsh-agent'
import { describe, expect, it } from 'vitest'
import { flush, outcome, setup, StubBackend, summary } from './helpers'

async function failure(promise: Promise<unknown>) {
  const result = await outcome(promise)
  return result.ok ? 'resolved' : summary(result.error)
}

describe('spawn', () => {
  it('mints pty-<n> from one counter; a failed spawn still consumes its number', async () => {
    const h = await setup()
    const backend = new StubBackend('shell', false)
    h.terminals.registerBackend(backend)
    const alice = await h.agent()
    const first = h.terminals.spawn(alice, { type: 'shell' })
    const second = h.terminals.spawn(alice, { type: 'shell' })
    backend.calls[0]!.result.resolve(backend.calls[0]!.session())
    backend.calls[1]!.result.reject(new Error('boom'))
    expect((await first).sessionId).toBe('pty-1')
    expect(await failure(second)).toEqual({ name: 'Error', message: 'boom' })
    backend.auto = true
    expect((await h.terminals.spawn(alice, { type: 'shell' })).sessionId).toBe('pty-3')
    expect(backend.calls.map((call) => call.spec.sessionId)).toEqual(['pty-1', 'pty-2', 'pty-3'])
  })

  it('hands the backend the request, the minted id, the exact owner and an abort signal', async () => {
    const h = await setup()
    const backend = new StubBackend()
    h.terminals.registerBackend(backend)
    const alice = await h.agent()
    const result = await h.terminals.spawn(alice, { type: 'shell', name: 'main', cwd: '/tmp' })
    const spec = backend.calls[0]!.spec
    expect({ type: spec.type, name: spec.name, cwd: spec.cwd, sessionId: spec.sessionId }).toEqual({
      type: 'shell',
      name: 'main',
      cwd: '/tmp',
      sessionId: 'pty-1',
    })
    expect(spec.owner === alice).toBe(true)
    expect(spec.signal.aborted).toBe(false)
    expect(result).toEqual({
      sessionId: 'pty-1',
      name: 'main',
      type: 'shell',
      pid: 1001,
      status: { kind: 'running' },
      motd: 'welcome to pty-1',
    })
  })

  it('checks in order: disposing, caller abort, owner, backend, name, duplicate name', async () => {
    const h = await setup()
    h.terminals.registerBackend(new StubBackend())
    const alice = await h.agent()
    await h.terminals.spawn(alice, { type: 'shell', name: 'taken' })
    const ended = await h.agent()
    await ended.dispose()
    const aborted = AbortSignal.abort(new Error('caller said stop'))

    // owner check comes before backend and name
    expect(await failure(h.terminals.spawn(ended, { type: 'nope', name: '' }))).toMatchObject({ code: 'OWNER_NOT_LIVE' })
    // caller abort comes before owner: the exact reason
    expect(await failure(h.terminals.spawn(ended, { type: 'shell' }, aborted))).toEqual({ name: 'Error', message: 'caller said stop' })
    // backend before name
    expect(await failure(h.terminals.spawn(alice, { type: 'nope', name: '' }))).toMatchObject({ code: 'NO_BACKEND' })
    expect(await failure(h.terminals.spawn(alice, { type: 'shell', name: '  ' }))).toEqual({
      name: 'TerminalError',
      code: 'INVALID_REQUEST',
      message: 'PTY session name must be a non-empty string',
    })
    expect(await failure(h.terminals.spawn(alice, { type: 'shell', name: 'taken' }))).toEqual({
      name: 'TerminalError',
      code: 'DUPLICATE_NAME',
      message: 'PTY session name "taken" is already in use by this agent',
    })
    // none of the refused calls consumed an id
    expect((await h.terminals.spawn(alice, { type: 'shell' })).sessionId).toBe('pty-2')

    // disposing comes first of all
    const terminals = h.terminals
    await h.terminalFiber.dispose()
    expect(await failure(terminals.spawn(ended, { type: 'nope' }, aborted))).toEqual({
      name: 'TerminalError',
      code: 'SERVICE_DISPOSING',
      message: 'PTY service is disposing',
    })
  })

  it('refuses a look-alike agent that carries a live agent id', async () => {
    const h = await setup()
    h.terminals.registerBackend(new StubBackend())
    const real = await h.agent('same')
    const fiber = h.root.plugin({ name: 'look-alike', apply: () => {} })
    await fiber
    const lookAlike = new Agent('same', fiber)
    expect(await failure(h.terminals.spawn(lookAlike, { type: 'shell' }))).toEqual({
      name: 'TerminalError',
      code: 'OWNER_NOT_LIVE',
      message: 'agent same is not a live PTY owner',
    })
    const opened = await h.terminals.spawn(real, { type: 'shell' })
    expect(h.terminals.hasOwnerActivity(lookAlike)).toBe(false)
    const refusals = [
      () => h.terminals.list(lookAlike),
      () => h.terminals.read(lookAlike, opened.sessionId),
      () => h.terminals.startSend(lookAlike, opened.sessionId, { text: 'id', submit: true }),
    ].map((call) => {
      try {
        call()
        return 'allowed'
      } catch (error) {
        return summary(error).code
      }
    })
    expect(refusals).toEqual(['OWNER_NOT_LIVE', 'OWNER_NOT_LIVE', 'OWNER_NOT_LIVE'])
    expect(await failure(h.terminals.close(lookAlike, opened.sessionId))).toMatchObject({ code: 'OWNER_NOT_LIVE' })
    expect(await failure(h.terminals.signal(lookAlike, opened.sessionId, 'SIGINT'))).toMatchObject({ code: 'OWNER_NOT_LIVE' })
    expect(h.terminals.list(real).map((s) => s.sessionId)).toEqual([opened.sessionId])
  })

  it('two spawns racing for one name: the second is DUPLICATE_NAME while the first is in flight', async () => {
    const h = await setup()
    const backend = new StubBackend('shell', false)
    h.terminals.registerBackend(backend)
    const alice = await h.agent()
    const bob = await h.agent()
    const first = h.terminals.spawn(alice, { type: 'shell', name: 'main' })
    const second = h.terminals.spawn(alice, { type: 'shell', name: 'main' })
    const bobs = h.terminals.spawn(bob, { type: 'shell', name: 'main' })
    expect(await failure(second)).toMatchObject({ code: 'DUPLICATE_NAME' })
    expect(backend.calls.length).toBe(2)
    backend.calls[0]!.result.reject(new Error('startup timeout'))
    expect(await failure(first)).toMatchObject({ message: 'startup timeout' })
    // the failed attempt released its name
    const third = h.terminals.spawn(alice, { type: 'shell', name: 'main' })
    backend.calls[2]!.result.resolve(backend.calls[2]!.session())
    backend.calls[1]!.result.resolve(backend.calls[1]!.session())
    expect([(await third).name, (await bobs).name]).toEqual(['main', 'main'])
    // a published name is still reserved
    expect(await failure(h.terminals.spawn(alice, { type: 'shell', name: 'main' }))).toMatchObject({ code: 'DUPLICATE_NAME' })
  })

  it('a closed session frees its name', async () => {
    const h = await setup()
    h.terminals.registerBackend(new StubBackend())
    const alice = await h.agent()
    const opened = await h.terminals.spawn(alice, { type: 'shell', name: 'main' })
    await h.terminals.close(alice, opened.sessionId)
    expect((await h.terminals.spawn(alice, { type: 'shell', name: 'main' })).name).toBe('main')
  })

  it('hasOwnerActivity is true from the first moment of a spawn through publication to the end of its close', async () => {
    const h = await setup()
    const backend = new StubBackend('shell', false)
    h.terminals.registerBackend(backend)
    const alice = await h.agent()
    const seen: boolean[] = []
    expect(h.terminals.hasOwnerActivity(alice)).toBe(false)
    const spawning = h.terminals.spawn(alice, { type: 'shell' })
    seen.push(h.terminals.hasOwnerActivity(alice))
    const session = backend.calls[0]!.session()
    session.closeGate = []
    // sample on every microtask between backend settlement and the caller seeing the result
    let sampling = true
    const sample = async () => {
      while (sampling) {
        seen.push(h.terminals.hasOwnerActivity(alice))
        await Promise.resolve()
      }
    }
    const sampler = sample()
    backend.calls[0]!.result.resolve(session)
    const { sessionId } = await spawning
    sampling = false
    await sampler
    const killing = h.terminals.close(alice, sessionId)
    await flush()
    seen.push(h.terminals.hasOwnerActivity(alice))
    session.closeGate[0]!.resolve()
    expect(await killing).toBe(true)
    expect(seen.every(Boolean)).toBe(true)
    expect(seen.length).toBeGreaterThan(3)
    expect(h.terminals.hasOwnerActivity(alice)).toBe(false)
  })

  it('a backend that throws synchronously is a rejected spawn that frees its reservation', async () => {
    const h = await setup()
    h.terminals.registerBackend({
      type: 'shell',
      spawn: () => {
        throw new Error('sync failure')
      },
    })
    const alice = await h.agent()
    expect(await failure(h.terminals.spawn(alice, { type: 'shell', name: 'main' }))).toMatchObject({ message: 'sync failure' })
    expect(h.terminals.hasOwnerActivity(alice)).toBe(false)
  })

  it('a caller abort after publication does not touch the published session', async () => {
    const h = await setup()
    const backend = new StubBackend()
    h.terminals.registerBackend(backend)
    const alice = await h.agent()
    const caller = new AbortController()
    const opened = await h.terminals.spawn(alice, { type: 'shell' }, caller.signal)
    caller.abort(new Error('too late'))
    await flush()
    expect(backend.sessions[0]!.closes).toEqual([])
    expect(h.terminals.list(alice).map((s) => s.sessionId)).toEqual([opened.sessionId])
  })
})
