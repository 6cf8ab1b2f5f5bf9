import { afterEach, describe, expect, it } from 'vitest'
import { disposeAll, flush, setup } from './harness'

afterEach(disposeAll)

const SESSION_TOOLS: [string, Record<string, unknown>][] = [
  ['terminal_send', { text: 'ls' }],
  ['terminal_read', {}],
  ['terminal_signal', { signal: 'SIGINT' }],
  ['terminal_close', {}],
]

describe('error paths: every refusal is one bounded "Error: …" text with a stable code', () => {
  it('an unknown session id is NO_SESSION for every session tool', async () => {
    const h = await setup()
    for (const [name, args] of SESSION_TOOLS) {
      const result = await h.call(name, { sessionId: 'pty-9', ...args })
      expect({ name, text: h.text(result), code: result.error?.code, isError: result.isError }).toEqual({
        name,
        text: 'Error: unknown PTY session pty-9',
        code: 'NO_SESSION',
        isError: true,
      })
    }
  })

  it("another agent's session is FOREIGN_SESSION and is left untouched", async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    const other = await h.root.agents.create()
    for (const [name, args] of SESSION_TOOLS) {
      const result = await h.call(name, { sessionId: 'pty-1', ...args }, { agent: other })
      expect({ name, text: h.text(result), code: result.error?.code }).toEqual({
        name,
        text: 'Error: PTY session pty-1 belongs to another agent',
        code: 'FOREIGN_SESSION',
      })
    }
    const session = h.backend.session('pty-1')
    expect({ sends: session.sends.length, signals: session.signals, closes: session.closes }).toEqual({ sends: 0, signals: [], closes: [] })
    expect(h.text(await h.call('terminal_list', {}, { agent: other }))).toBe('(no terminal sessions)')
  })

  it('an empty session id is refused before the registry is asked', async () => {
    const h = await setup()
    for (const [name, args] of SESSION_TOOLS) {
      const result = await h.call(name, { sessionId: '', ...args })
      expect({ name, code: result.error?.code }).toEqual({ name, code: 'INVALID_ARGUMENTS' })
      expect(h.text(result)).toBe(
        `Error: invalid arguments for tool "${name}": sessionId: sessionId must be a non-empty session id such as "pty-1" (terminal_list shows yours)`,
      )
    }
  })

  it('a signal outside the closed set is refused; SIGKILL of the shell reports the backend refusal', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    const bad = await h.call('terminal_signal', { sessionId: 'pty-1', signal: 'SIGUSR1' })
    expect(bad.error?.code).toBe('INVALID_ARGUMENTS')
    expect(h.text(bad)).toContain('signal: Invalid option: expected one of "SIGINT"|"SIGTERM"|"SIGKILL"|"SIGTSTP"|"SIGHUP"')
    const kill = await h.call('terminal_signal', { sessionId: 'pty-1', signal: 'SIGKILL' })
    expect(h.text(kill)).toBe('Error: refusing to SIGKILL the terminal shell; terminate the terminal session instead')
    expect(h.backend.session('pty-1').signals).toEqual([])
  })

  it('a send while another is active is SEND_ACTIVE and writes nothing', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    const session = h.backend.session('pty-1')
    session.replies.push('hang')
    const first = h.call('terminal_send', { sessionId: 'pty-1', text: 'sleep 100' })
    await flush()
    const second = await h.call('terminal_send', { sessionId: 'pty-1', text: 'echo late' })
    expect(h.text(second)).toBe(
      'Error: PTY session pty-1 is busy: an earlier send on it has not finished (another terminal_send still waiting, or one being interrupted). Wait for it, then send again; terminal_signal SIGINT interrupts what runs in front.',
    )
    expect(second.error?.code).toBe('SEND_ACTIVE')
    expect(session.sends.map((send) => send.request.text)).toEqual(['sleep 100'])
    session.sends[0]!.finish({ viewport: 'woke' })
    expect(h.text(await first)).toBe('woke\n[wait: stdin_read]\n[exit: 0]\n[session: running]')
  })

  it('every tool requires an initiating agent', async () => {
    const h = await setup()
    const calls: [string, Record<string, unknown>][] = [
      ['terminal_open', { type: 'shell' }],
      ...SESSION_TOOLS.map(([name, args]): [string, Record<string, unknown>] => [name, { sessionId: 'pty-1', ...args }]),
      ['terminal_list', {}],
    ]
    for (const [name, args] of calls) {
      const result = await h.call(name, args, { agent: null })
      expect({ name, text: h.text(result), code: result.error?.code }).toEqual({
        name,
        text: `Error: tool "${name}" requires an initiating agent`,
        code: 'NO_AGENT',
      })
    }
    expect(h.backend.sessions).toEqual([])
  })

  it('open refuses an unknown type, a duplicate name and a failing backend', async () => {
    const h = await setup()
    const unknown = await h.call('terminal_open', { type: 'python' })
    expect([h.text(unknown), unknown.error?.code]).toEqual(['Error: no PTY backend registered for "python"', 'NO_BACKEND'])
    await h.call('terminal_open', { type: 'shell', name: 'main' })
    const duplicate = await h.call('terminal_open', { type: 'shell', name: 'main' })
    expect([h.text(duplicate), duplicate.error?.code]).toEqual(['Error: PTY session name "main" is already in use by this agent', 'DUPLICATE_NAME'])
    const missing = await h.call('terminal_open', { type: 'shell', cwd: '/missing' })
    expect([h.text(missing), missing.error?.code]).toEqual(['Error: PTY cwd /missing is not an existing directory', 'TOOL_FAILED'])
    const empty = await h.call('terminal_open', { type: '' })
    expect(h.text(empty)).toBe('Error: invalid arguments for tool "terminal_open": type: type must name a terminal backend, e.g. "shell"')
  })

  it("the registry's bounds reach the model with their codes: session name, sessions per agent, text per send", async () => {
    const h = await setup()
    const named = await h.call('terminal_open', { type: 'shell', name: 'x\x1b]0;pwned\x07' })
    expect([h.text(named), named.error?.code]).toEqual([
      'Error: PTY session name must be printable text: character 2 is U+001B (a control character); use letters, digits, spaces and punctuation only',
      'INVALID_REQUEST',
    ])
    for (let index = 0; index < 16; index++) expect((await h.call('terminal_open', { type: 'shell' })).isError).toBeFalsy()
    const seventeenth = await h.call('terminal_open', { type: 'shell' })
    expect(seventeenth.error?.code).toBe('SESSION_LIMIT')
    expect(h.text(seventeenth)).toMatch(/^Error: PTY session limit reached: .* already holds 16 sessions.*terminal_close/)
    for (const background of [false, true]) {
      const huge = await h.call('terminal_send', { sessionId: 'pty-2', text: 'x'.repeat(65_537), run_in_background: background })
      expect([huge.error?.code, h.text(huge)]).toEqual(['TEXT_TOO_LARGE', expect.stringContaining('65537 UTF-8 bytes, over the limit of 65536')])
    }
    // nothing was written and no job was started for the refused sends
    expect(h.backend.session('pty-2').sends).toEqual([])
    expect(h.root.jobs.list(h.agent)).toEqual([])
  })

  it('unknown arguments are refused (strict schemas), on every tool', async () => {
    const h = await setup()
    const result = await h.call('terminal_list', { verbose: true })
    expect(h.text(result)).toBe('Error: invalid arguments for tool "terminal_list": arguments: Unrecognized key: "verbose"')
    const read = await h.call('terminal_read', { sessionId: 'pty-1', lines: 3 })
    expect(read.error?.code).toBe('INVALID_ARGUMENTS')
  })

  it('a failing send reports the backend error', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    h.backend.session('pty-1').replies.push(new Error('PTY write failed: EIO'))
    const result = await h.call('terminal_send', { sessionId: 'pty-1', text: 'ls' })
    expect([h.text(result), result.error?.code]).toEqual(['Error: PTY write failed: EIO', 'TOOL_FAILED'])
  })

  it('an ended agent cannot use its sessions', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    await h.agent.dispose()
    expect(h.backend.session('pty-1').closes).toEqual(['PTY owner disposed'])
    const result = await h.call('terminal_list')
    expect(result.error?.code).toBe('AGENT_ENDED')
  })
})
