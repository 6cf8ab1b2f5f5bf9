import { afterEach, describe, expect, it } from 'vitest'
import { disposeAll, setup } from './harness'

afterEach(disposeAll)

describe('the six tools against a stub backend: exact texts and meta', () => {
  it('terminal_open returns the id, name, type and startup output', async () => {
    const h = await setup()
    const named = await h.call('terminal_open', { type: 'shell', name: 'main' })
    expect(h.text(named)).toBe('started terminal session pty-1 (main) [type: shell]\nstub shell ready')
    expect(named.isError).toBe(false)
    expect(named.meta).toEqual({ sessionId: 'pty-1', name: 'main', type: 'shell', pid: 4001, sessionStatus: { kind: 'running' }, truncated: false })
    expect(named.presentation).toEqual({ kind: 'execute', title: 'open shell terminal main', rawInput: { type: 'shell', name: 'main' } })

    h.backend.motd = ''
    const unnamed = await h.call('terminal_open', { type: 'shell', cwd: '/tmp' })
    expect(h.text(unnamed)).toBe('started terminal session pty-2 [type: shell]')
    expect(h.backend.session('pty-2').spec.cwd).toBe('/tmp')
    expect(h.backend.session('pty-2').spec.owner === h.agent).toBe(true)
  })

  it('terminal_send returns the viewport, then wait, exit and session lines', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    const session = h.backend.session('pty-1')
    const result = await h.call('terminal_send', { sessionId: 'pty-1', text: 'echo hi' })
    expect(h.text(result)).toBe('out:echo hi\n[wait: stdin_read]\n[exit: 0]\n[session: running]')
    expect(result.meta).toEqual({
      sessionId: 'pty-1',
      background: false,
      waitReason: 'stdin_read',
      sessionStatus: { kind: 'running' },
      exitCode: 0,
      output: { bytes: 11, lines: 1, shownBytes: 11, foldedLines: 0, omittedLines: 0, omittedBytes: 0 },
      truncated: false,
    })
    expect(result.presentation).toEqual({
      kind: 'execute',
      title: 'pty-1: echo hi',
      rawInput: { sessionId: 'pty-1', text: 'echo hi' },
      card: { type: 'terminal', sessionId: 'pty-1' },
    })
    expect(session.sends[0]!.request.text).toBe('echo hi')
    expect(session.sends[0]!.request.submit).toBe(true)
  })

  it('terminal_send with submit false sends the text alone, control characters unchanged', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    await h.call('terminal_send', { sessionId: 'pty-1', text: 'partial \u0004', submit: false })
    const request = h.backend.session('pty-1').sends[0]!.request
    expect({ text: request.text, submit: request.submit }).toEqual({ text: 'partial \u0004', submit: false })
  })

  it('terminal_send renders an empty viewport, an unknown exit status, an exited session and a backend truncation', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    const session = h.backend.session('pty-1')
    session.replies.push({
      viewport: '',
      waitReason: 'session_exit',
      exitCode: undefined,
      sessionStatus: { kind: 'exited', exitCode: 0, signal: null },
    })
    const exited = await h.call('terminal_send', { sessionId: 'pty-1', text: 'exit' })
    expect(h.text(exited)).toBe('(no new output)\n[wait: session_exit]\n[session: exited code=0 signal=null]')
    expect(exited.meta?.exitCode).toBeUndefined()

    session.replies.push({ viewport: 'tail of a flood', waitReason: 'timeout', exitCode: undefined, truncated: true })
    const flood = await h.call('terminal_send', { sessionId: 'pty-1', text: 'yes' })
    expect(h.text(flood)).toBe('tail of a flood\n[wait: timeout]\n[session: running]\n[output truncated]')
    expect(flood.meta?.truncated).toBe(true)

    session.replies.push({ viewport: 'x', waitReason: 'inferred_idle', exitCode: 1 })
    const failed = await h.call('terminal_send', { sessionId: 'pty-1', text: 'false' })
    expect(h.text(failed)).toBe('x\n[wait: inferred_idle]\n[exit: 1]\n[session: running]')
  })

  it('terminal_read pages retained scrollback with its line numbers (count defaults to 500)', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    const session = h.backend.session('pty-1')
    session.lines = Array.from({ length: 600 }, (_, i) => `line ${i + 1}`)
    const newest = await h.call('terminal_read', { sessionId: 'pty-1' })
    expect(session.reads[0]).toEqual({ count: 500 })
    expect(h.text(newest).endsWith('line 600\n[lines: 101-600 of 600]')).toBe(true)
    expect(h.text(newest).startsWith('line 101\n')).toBe(true)

    const older = await h.call('terminal_read', { sessionId: 'pty-1', offset: 590, count: 5 })
    expect(h.text(older)).toBe('line 6\nline 7\nline 8\nline 9\nline 10\n[lines: 6-10 of 600]')
    expect(older.meta).toEqual({
      sessionId: 'pty-1',
      totalLines: 600,
      lineBegin: 6,
      lineEnd: 10,
      oldestLine: 1,
      output: { bytes: 35, lines: 5, shownBytes: 35, foldedLines: 0, omittedLines: 0, omittedBytes: 0 },
      truncated: false,
    })
    expect(older.presentation.kind).toBe('read')

    session.lines = []
    expect(h.text(await h.call('terminal_read', { sessionId: 'pty-1' }))).toBe('(no output)\n[lines: 0-0 of 0]')
  })

  it('terminal_signal reports the process group that received the signal', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    const result = await h.call('terminal_signal', { sessionId: 'pty-1', signal: 'SIGINT' })
    expect(h.text(result)).toBe('delivered SIGINT to foreground process group 4001')
    expect(result.meta).toEqual({ sessionId: 'pty-1', signal: 'SIGINT', delivered: true, targetPgid: 4001, truncated: false })
    expect(result.presentation).toEqual({ kind: 'execute', title: 'SIGINT pty-1', rawInput: { sessionId: 'pty-1', signal: 'SIGINT' } })
    expect(h.backend.session('pty-1').signals).toEqual(['SIGINT'])
  })

  it('terminal_close closes once; a second close of the same id is an unknown session', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    const closed = await h.call('terminal_close', { sessionId: 'pty-1' })
    expect(h.text(closed)).toBe('closed terminal session pty-1')
    expect(closed.meta).toEqual({ sessionId: 'pty-1', closed: true, truncated: false })
    expect(closed.presentation.kind).toBe('delete')
    expect(h.backend.session('pty-1').closes).toEqual(['closed by terminal_close'])
    const again = await h.call('terminal_close', { sessionId: 'pty-1' })
    expect(h.text(again)).toBe('Error: unknown PTY session pty-1')
    expect(again.error?.code).toBe('NO_SESSION')
  })

  it('terminal_close joining a close in flight says so', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    const session = h.backend.session('pty-1')
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const close = session.close.bind(session)
    session.close = async (reason) => {
      await gate
      return close(reason)
    }
    const first = h.call('terminal_close', { sessionId: 'pty-1' })
    const second = h.call('terminal_close', { sessionId: 'pty-1' })
    release()
    expect(h.text(await first)).toBe('closed terminal session pty-1')
    const joined = await second
    expect(h.text(joined)).toBe('terminal session pty-1 was already closing')
    expect(joined.meta?.closed).toBe(false)
  })

  it('terminal_list shows one line per session, or that there are none', async () => {
    const h = await setup()
    const empty = await h.call('terminal_list', {})
    expect(h.text(empty)).toBe('(no terminal sessions)')
    expect(empty.meta).toEqual({ sessions: [], truncated: false })
    await h.call('terminal_open', { type: 'shell', name: 'main' })
    await h.call('terminal_open', { type: 'shell' })
    h.backend.session('pty-2').state = { kind: 'exited', exitCode: 2, signal: null }
    const listed = await h.call('terminal_list')
    expect(h.text(listed)).toBe('pty-1 (main) [shell] running pid=4001\npty-2 [shell] exited code=2 signal=null pid=4002')
    expect(listed.meta?.sessions).toEqual([
      { sessionId: 'pty-1', name: 'main', type: 'shell', pid: 4001, status: { kind: 'running' } },
      { sessionId: 'pty-2', type: 'shell', pid: 4002, status: { kind: 'exited', exitCode: 2, signal: null } },
    ])
    expect(listed.presentation).toEqual({ kind: 'read', title: 'list terminal sessions', rawInput: {} })
  })

  it('every presentation is location-free and uses the documented kinds', async () => {
    const h = await setup()
    const kinds = Object.fromEntries(
      [
        ['terminal_open', { type: 'shell' }],
        ['terminal_read', { sessionId: 'pty-1' }],
        ['terminal_signal', { sessionId: 'pty-1', signal: 'SIGINT' }],
        ['terminal_close', { sessionId: 'pty-1' }],
        ['terminal_list', {}],
        ['terminal_send', { sessionId: 'pty-1', text: 'ls' }],
        ['terminal_send', { sessionId: 'pty-1', text: 'ls', run_in_background: true }],
      ].map(([name, args], index) => {
        const presentation = h.root.tools.describeCall({ name: name as string, arguments: args })
        expect('locations' in presentation).toBe(false)
        return [`${index}:${name}`, { kind: presentation.kind, card: presentation.card?.type ?? null }]
      }),
    )
    expect(kinds).toEqual({
      '0:terminal_open': { kind: 'execute', card: null },
      '1:terminal_read': { kind: 'read', card: null },
      '2:terminal_signal': { kind: 'execute', card: null },
      '3:terminal_close': { kind: 'delete', card: null },
      '4:terminal_list': { kind: 'read', card: null },
      '5:terminal_send': { kind: 'execute', card: 'terminal' },
      '6:terminal_send': { kind: 'execute', card: null },
    })
  })
})
