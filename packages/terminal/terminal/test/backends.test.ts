import type { Context } from '@deepseek-ai/cordis'
import { describe, expect, it } from 'vitest'
import { flush, outcome, setup, StubBackend, summary } from './helpers'

describe('backend registry', () => {
  it('lists registered types in registration order', async () => {
    const h = await setup()
    h.terminals.registerBackend(new StubBackend('shell'))
    h.terminals.registerBackend(new StubBackend('python'))
    expect(h.terminals.listBackends()).toEqual(['shell', 'python'])
  })

  it('refuses an empty type and a duplicate type', async () => {
    const h = await setup()
    h.terminals.registerBackend(new StubBackend('shell'))
    const empty = (() => {
      try {
        h.terminals.registerBackend(new StubBackend(''))
      } catch (error) {
        return summary(error)
      }
    })()
    expect(empty).toEqual({ name: 'TerminalError', code: 'INVALID_REQUEST', message: 'PTY backend type must be a non-empty string' })
    const duplicate = (() => {
      try {
        h.terminals.registerBackend(new StubBackend('shell'))
      } catch (error) {
        return summary(error)
      }
    })()
    expect(duplicate).toEqual({ name: 'TerminalError', code: 'DUPLICATE_BACKEND', message: 'PTY backend "shell" is already registered' })
    expect(h.terminals.listBackends()).toEqual(['shell'])
  })

  it('the disposer removes its own registration once and never a replacement', async () => {
    const h = await setup()
    const first = new StubBackend('shell')
    const removeFirst = h.terminals.registerBackend(first)
    removeFirst()
    expect(h.terminals.listBackends()).toEqual([])
    const replacement = new StubBackend('shell')
    h.terminals.registerBackend(replacement)
    removeFirst()
    expect(h.terminals.listBackends()).toEqual(['shell'])
    const alice = await h.agent()
    await h.terminals.spawn(alice, { type: 'shell' })
    expect([first.calls.length, replacement.calls.length]).toEqual([0, 1])
  })

  it('re-registering the same backend object is a new registration the old disposer cannot remove', async () => {
    const h = await setup()
    const backend = new StubBackend('shell')
    const removeOld = h.terminals.registerBackend(backend)
    removeOld()
    h.terminals.registerBackend(backend)
    removeOld()
    expect(h.terminals.listBackends()).toEqual(['shell'])
  })

  it('is undone when the registering plugin unloads', async () => {
    const h = await setup()
    const fiber = await h.mountBackend(new StubBackend('shell'))
    expect(h.terminals.listBackends()).toEqual(['shell'])
    await fiber.dispose()
    expect(h.terminals.listBackends()).toEqual([])
  })

  it('an unloading plugin does not remove a replacement registered by another plugin', async () => {
    const h = await setup()
    let remove: (() => void) | undefined
    const older = h.root.plugin({
      name: 'older',
      inject: ['terminals'],
      apply: (ctx: Context) => {
        remove = ctx.terminals.registerBackend(new StubBackend('shell'))
      },
    })
    await older
    remove?.()
    const replacement = new StubBackend('shell')
    await h.mountBackend(replacement)
    await older.dispose()
    expect(h.terminals.listBackends()).toEqual(['shell'])
    const alice = await h.agent()
    await h.terminals.spawn(alice, { type: 'shell' })
    expect(replacement.calls.length).toBe(1)
  })

  it('unknown type is NO_BACKEND', async () => {
    const h = await setup()
    const alice = await h.agent()
    const result = await outcome(h.terminals.spawn(alice, { type: 'zsh' }))
    expect(result.ok ? 'resolved' : summary(result.error)).toEqual({
      name: 'TerminalError',
      code: 'NO_BACKEND',
      message: 'no PTY backend registered for "zsh"',
    })
  })
})

describe('sessions outlive their backend plugin', () => {
  it('keeps, drives and closes a session after its backend plugin unloads, and spawns again after reload', async () => {
    const h = await setup()
    const backend = new StubBackend('shell')
    const fiber = await h.mountBackend(backend)
    const alice = await h.agent()
    const opened = await h.terminals.spawn(alice, { type: 'shell', name: 'main' })
    await fiber.dispose()
    await flush()
    expect(h.terminals.listBackends()).toEqual([])
    expect(h.terminals.list(alice).map((s) => [s.sessionId, s.name])).toEqual([[opened.sessionId, 'main']])

    const send = h.terminals.startSend(alice, opened.sessionId, { text: 'pwd', submit: true })
    backend.sessions[0]!.sends[0]!.finish('/tmp')
    expect((await send.done).viewport).toBe('/tmp')
    expect(h.terminals.read(alice, opened.sessionId, { count: 5 }).text).toBe('line')
    const noBackend = await outcome(h.terminals.spawn(alice, { type: 'shell' }))
    expect(noBackend.ok ? 'resolved' : summary(noBackend.error).code).toBe('NO_BACKEND')

    const reloaded = new StubBackend('shell')
    await h.mountBackend(reloaded)
    const second = await h.terminals.spawn(alice, { type: 'shell', name: 'other' })
    expect(h.terminals.list(alice).map((s) => s.sessionId)).toEqual([opened.sessionId, second.sessionId])
    expect(await h.terminals.close(alice, opened.sessionId)).toBe(true)
    expect(backend.sessions[0]!.closes).toEqual(['model request'])
    expect(h.terminals.list(alice).map((s) => s.sessionId)).toEqual([second.sessionId])
  })
})
