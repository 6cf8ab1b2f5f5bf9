import type { Context } from '@deepseek-ai/cordis'
import type { TerminalSessionListener, TerminalSessionObserver, TerminalSessionStart } from 'dsh-terminal'
import { describe, expect, it } from 'vitest'
import { flush, setup, StubBackend } from './helpers'

/** An observer that writes down, as plain strings, every call it gets. */
function journal(): { observer: TerminalSessionObserver; lines: string[]; starts: TerminalSessionStart[] } {
  const lines: string[] = []
  const starts: TerminalSessionStart[] = []
  const observer: TerminalSessionObserver = {
    sessionStarting(start) {
      starts.push(start)
      const id = start.sessionId
      const listener: TerminalSessionListener = {
        published: ({ size }) => lines.push(`${id} published ${size ? `${size.cols}x${size.rows}` : 'no size'}`),
        output: (bytes) => lines.push(`${id} output ${Buffer.from(bytes).toString()}`),
        sendStarted: (send) =>
          lines.push(`${id} send ${send.number} ${send.callId ?? '-'} ${JSON.stringify(send.text)} before=${send.inputBefore?.kind ?? '-'}`),
        sendSettled: (send, result) => lines.push(`${id} settled ${send.number} ${result?.waitReason ?? 'failed'}`),
        personTyped: () => lines.push(`${id} person typed`),
        ended: (reason) => lines.push(`${id} ended ${reason}`),
      }
      return listener
    },
  }
  return { observer, lines, starts }
}

describe('session observers (ctx.terminals.observeSessions)', () => {
  it('hear the start, raw output from the spawn on, each send with its call id and the input state it followed, and the end', async () => {
    const h = await setup()
    const backend = new StubBackend('shell', false)
    await h.mountBackend(backend)
    const { observer, lines, starts } = journal()
    h.terminals.observeSessions(observer)
    const agent = await h.agent('a1')
    const opening = h.terminals.spawn(agent, { type: 'shell', name: 'main' })
    const call = backend.calls[0]!
    // The backend is handed the observer's tap and prints before it is published.
    call.spec.onOutput?.(Buffer.from('motd\r\n'))
    call.result.resolve(call.session())
    const { sessionId } = await opening
    expect(starts).toEqual([{ sessionId, ownerId: 'a1', type: 'shell', name: 'main', startedAt: expect.any(Number) }])

    const first = h.terminals.startSend(agent, sessionId, { text: 'sudo true', submit: true, callId: 'call-7' })
    const stub = backend.sessions[0]!.sends[0]!
    stub.result.resolve({ viewport: '', waitReason: 'stdin_read', sessionStatus: { kind: 'running' }, truncated: false, input: { kind: 'password' } })
    await first.done
    const second = h.terminals.startSend(agent, sessionId, { text: 'hunter2', submit: true })
    backend.sessions[0]!.sends[1]!.finish()
    await second.done
    await h.terminals.close(agent, sessionId, 'done here')
    await flush()
    expect(lines).toEqual([
      `${sessionId} output motd\r\n`,
      `${sessionId} published no size`,
      `${sessionId} send 1 call-7 "sudo true" before=-`,
      `${sessionId} settled 1 stdin_read`,
      `${sessionId} send 2 - "hunter2" before=password`,
      `${sessionId} settled 2 stdin_read`,
      `${sessionId} ended done here`,
    ])
    await h.terminalFiber.dispose()
  })

  it('hear a failed spawn end, lose a listener that throws without harming the session, and stop with their plugin', async () => {
    const h = await setup()
    const backend = new StubBackend('shell', false)
    await h.mountBackend(backend)
    const { observer, lines } = journal()
    const fiber = await h.root.plugin({
      name: 'observer',
      inject: ['terminals'],
      apply: (ctx: Context) => {
        ctx.terminals.observeSessions(observer)
      },
    })
    const throwing: TerminalSessionObserver = {
      sessionStarting: () => ({
        sendStarted: () => {
          throw new Error('observer bug')
        },
      }),
    }
    h.terminals.observeSessions(throwing)
    const agent = await h.agent()
    const failing = h.terminals.spawn(agent, { type: 'shell' })
    backend.calls[0]!.result.reject(new Error('no shell'))
    await expect(failing).rejects.toThrow('no shell')
    expect(lines).toEqual(['pty-1 ended the spawn failed'])

    const opening = h.terminals.spawn(agent, { type: 'shell' })
    backend.calls[1]!.result.resolve(backend.calls[1]!.session())
    const { sessionId } = await opening
    const send = h.terminals.startSend(agent, sessionId, { text: 'ls', submit: true })
    backend.sessions[0]!.sends[0]!.finish()
    await send.done
    expect(lines.at(-1)).toBe(`${sessionId} settled 1 stdin_read`)

    await fiber.dispose()
    lines.length = 0
    const third = h.terminals.spawn(agent, { type: 'shell' })
    backend.calls[2]!.result.resolve(backend.calls[2]!.session())
    await third
    // Unloaded: the third session is not watched; the second still is, to its end.
    expect(backend.calls[2]!.spec.onOutput).toBeUndefined()
    await h.terminals.close(agent, sessionId)
    expect(lines).toEqual([`${sessionId} ended model request`])
    await h.terminalFiber.dispose()
  })
})
