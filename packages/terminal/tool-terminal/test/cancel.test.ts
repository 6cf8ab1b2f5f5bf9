import { settleOrCancel } from '../src/internal'
import { asTerminalSessionId } from 'dsh-terminal'
import { afterEach, describe, expect, it } from 'vitest'
import { disposeAll, flush, setup } from './harness'

afterEach(disposeAll)

const CANCELLED_TEXT = 'Error: terminal_send on pty-1 was cancelled; SIGINT was sent to its foreground process group. Use terminal_read to see the output.'

describe('cancelling a foreground terminal_send', () => {
  it('delivers SIGINT through the send and returns a CANCELLED error as soon as the send settles', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    const session = h.backend.session('pty-1')
    session.replies.push('hang')
    const controller = new AbortController()
    const pending = h.call('terminal_send', { sessionId: 'pty-1', text: 'sleep 60' }, { signal: controller.signal })
    await flush()
    expect(session.sends[0]!.request.signal?.aborted).toBe(false)
    controller.abort()
    const result = await pending
    expect([h.text(result), result.error?.code, result.isError]).toEqual([CANCELLED_TEXT, 'CANCELLED', true])
    expect(session.signals).toEqual(['SIGINT'])
    // The interrupted send released the session: the next send runs.
    const next = await h.call('terminal_send', { sessionId: 'pty-1', text: 'echo after' })
    expect(h.text(next)).toBe('out:echo after\n[wait: stdin_read]\n[exit: 0]\n[session: running]')
  })

  it('a call cancelled before it starts writes nothing', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    const controller = new AbortController()
    controller.abort()
    const result = await h.call('terminal_send', { sessionId: 'pty-1', text: 'rm -rf build' }, { signal: controller.signal })
    expect(result.error?.code).toBe('CANCELLED')
    expect(h.backend.session('pty-1').sends).toEqual([])
  })

  it('returns after the grace even when the backend never settles; the session stays reserved until it does', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    const session = h.backend.session('pty-1')
    session.honourCancel = false
    session.replies.push('hang')
    const handle = h.root.terminals.startSend(h.agent, asTerminalSessionId('pty-1'), { text: 'stuck', submit: true })
    const controller = new AbortController()
    const pending = settleOrCancel(handle, controller.signal, asTerminalSessionId('pty-1'), 20)
    controller.abort()
    // The backend never settles the send: only the 20 ms grace can end the wait.
    await expect(pending).rejects.toMatchObject({ code: 'CANCELLED' })
    const busy = await h.call('terminal_send', { sessionId: 'pty-1', text: 'next' })
    expect(busy.error?.code).toBe('SEND_ACTIVE')
    session.sends[0]!.finish()
    await handle.released
    expect((await h.call('terminal_send', { sessionId: 'pty-1', text: 'next' })).isError).toBe(false)
  })

  it('a result that settled before the cancel is still returned', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    const handle = h.root.terminals.startSend(h.agent, asTerminalSessionId('pty-1'), { text: 'quick', submit: true })
    const controller = new AbortController()
    const pending = settleOrCancel(handle, controller.signal, asTerminalSessionId('pty-1'))
    await handle.done
    controller.abort()
    expect((await pending).viewport).toBe('out:quick')
  })

  it('a send that fails while the call is cancelled is reported as cancelled', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    const session = h.backend.session('pty-1')
    session.replies.push('hang')
    const controller = new AbortController()
    const pending = h.call('terminal_send', { sessionId: 'pty-1', text: 'x' }, { signal: controller.signal })
    await flush()
    session.honourCancel = false
    controller.abort()
    session.sends[0]!.fail(new Error('PTY session closed'))
    const result = await pending
    expect(result.error?.code).toBe('CANCELLED')
  })
})
