import type { TerminalHumanView } from 'dsh-terminal'
import { asTerminalSessionId } from 'dsh-terminal'
import { backgroundDetail, humanLine, listLine, secretLine, sendLayout, fitResult, TRUNCATION_MARKER } from '../src/internal'
import { afterEach, describe, expect, it } from 'vitest'
import { disposeAll, flush, type Harness, setup } from './harness'

afterEach(disposeAll)

/** A person's view of `sessionId`, as `dsh-terminal attach` opens one for the session's owner. */
function attach(h: Harness, sessionId = 'pty-1'): Promise<TerminalHumanView> {
  return h.root.terminals.observeAsHuman(
    h.agent,
    asTerminalSessionId(sessionId),
    { onOutput: () => {}, onEnd: () => {} },
    { client: 'a terminal (dsh-terminal attach)' },
  )
}

const SECRET_PTY_2 =
  '[secret: pty-2 waits for a password or other secret. Ask the user: they can type it themselves with dsh-terminal attach pty-2 (from another terminal), ' +
  'or give it to you. Never guess one or type a password you were not given]'

describe('the human line: a person attached to the session', () => {
  it('is written once per presence, and only when someone is attached', () => {
    expect([humanLine('watching'), humanLine('typing')]).toEqual(['[human: watching]', '[human: typing]'])
    const settled = { viewport: 'ok', waitReason: 'stdin_read', sessionStatus: { kind: 'running' }, truncated: false, exitCode: 0 } as const
    expect(fitResult(sendLayout(settled), 1000).text).toBe('ok\n[wait: stdin_read]\n[exit: 0]\n[session: running]')
    expect(fitResult(sendLayout({ ...settled, human: 'typing' }), 1000).text).toBe('ok\n[wait: stdin_read]\n[exit: 0]\n[session: running]\n[human: typing]')
    // Optional under a tiny cap, like the other courtesy lines: the wait and session lines stay.
    const tiny = fitResult(sendLayout({ ...settled, human: 'watching', viewport: 'x'.repeat(100) }), 64).text
    expect(tiny.endsWith(`x\n[wait: stdin_read]\n[session: running]\n${TRUNCATION_MARKER}`)).toBe(true)
    expect(tiny.length).toBe(64)
    const snapshot = { sessionId: asTerminalSessionId('pty-1'), type: 'shell', status: { kind: 'running' }, pid: 7, size: { rows: 40, cols: 160 } } as const
    expect(listLine(snapshot)).toBe('pty-1 [shell] running pid=7 size=160x40')
    expect(listLine({ ...snapshot, human: 'watching' }, { kind: 'prompt' })).toBe('pty-1 [shell] running pid=7 size=160x40 human=watching [input: prompt]')
    expect(backgroundDetail({ ...settled, human: 'watching' }, false)).toBe('wait: stdin_read, exit: 0, session: running, human: watching')
  })

  it('terminal_send and terminal_list say nothing of a person while nobody is attached', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    const sent = await h.call('terminal_send', { sessionId: 'pty-1', text: 'ls' })
    expect(h.text(sent)).toBe('out:ls\n[wait: stdin_read]\n[exit: 0]\n[session: running]')
    expect(sent.meta).not.toHaveProperty('human')
    const listed = await h.call('terminal_list')
    expect(h.text(listed)).toBe('pty-1 [shell] running pid=4001')
    expect(listed.meta?.sessions).toEqual([expect.not.objectContaining({ human: expect.anything() })])
  })

  it('a watching person shows on send results and list entries, text and meta, until the view closes', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell', name: 'main' })
    const view = await attach(h)
    const sent = await h.call('terminal_send', { sessionId: 'pty-1', text: 'ls' })
    expect(h.text(sent)).toBe('out:ls\n[wait: stdin_read]\n[exit: 0]\n[session: running]\n[human: watching]')
    expect(sent.meta).toMatchObject({ sessionId: 'pty-1', human: 'watching' })
    const listed = await h.call('terminal_list')
    expect(h.text(listed)).toBe('pty-1 (main) [shell] running pid=4001 human=watching')
    expect(listed.meta?.sessions).toEqual([expect.objectContaining({ sessionId: 'pty-1', human: 'watching' })])
    view.close()
    expect(h.text(await h.call('terminal_send', { sessionId: 'pty-1', text: 'ls' }))).toBe('out:ls\n[wait: stdin_read]\n[exit: 0]\n[session: running]')
    expect(h.text(await h.call('terminal_list'))).toBe('pty-1 (main) [shell] running pid=4001')
  })

  it('a person who typed while a send ran shows as typing on its result and in the list', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    const session = h.backend.session('pty-1')
    session.replies.push('hang')
    const pending = h.call('terminal_send', { sessionId: 'pty-1', text: 'make' })
    await flush()
    const view = await attach(h)
    view.takeWrite()
    await view.write('\u0003')
    session.sends[0]!.finish({ viewport: 'stopped' })
    const result = await pending
    expect(h.text(result)).toBe('stopped\n[wait: stdin_read]\n[exit: 0]\n[session: running]\n[human: typing]')
    expect(result.meta?.human).toBe('typing')
    expect(h.text(await h.call('terminal_list'))).toBe('pty-1 [shell] running pid=4001 human=typing')
    expect(session.humanWrites).toEqual(['\u0003'])
  })

  it('a background job detail says who is attached', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    await attach(h)
    await h.call('terminal_send', { sessionId: 'pty-1', text: 'make', run_in_background: true })
    expect(h.text(await h.call('job_output', { jobId: 'pty-send-1', wait: true }))).toBe(
      'out:make\n[status: completed, wait: stdin_read, exit: 0, session: running, human: watching]',
    )
  })
})

describe('HUMAN_ACTIVE: a person typed just now', () => {
  it('refuses a foreground and a background send with its code and advice, writing nothing and starting no job', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    const view = await attach(h)
    view.takeWrite()
    await view.write('vim notes.txt\r')
    for (const background of [false, true]) {
      const refused = await h.call('terminal_send', { sessionId: 'pty-1', text: 'ls', run_in_background: background })
      expect({ code: refused.error?.code, isError: refused.isError }).toEqual({ code: 'HUMAN_ACTIVE', isError: true })
      expect(h.text(refused)).toBe(
        'Error: a person is typing in PTY session pty-1 from a terminal (dsh-terminal attach); your send was not written. ' +
          'Wait about 5 s and send again, or read the session first (terminal_read): what they typed and what it printed is there',
      )
    }
    expect(h.backend.session('pty-1').sends).toEqual([])
    expect(h.root.jobs.list(h.agent)).toEqual([])
    // Reading is never refused: it is how the model sees what the person did.
    expect((await h.call('terminal_read', { sessionId: 'pty-1' })).isError).toBeFalsy()
  })

  it('ends when the typing person detaches', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    const view = await attach(h)
    view.takeWrite()
    await view.write('x')
    view.close()
    expect(h.text(await h.call('terminal_send', { sessionId: 'pty-1', text: 'ls' }))).toBe('out:ls\n[wait: stdin_read]\n[exit: 0]\n[session: running]')
  })
})

describe('a password asked: the secret line names the session to attach to', () => {
  it('is written for the session that asks, after the input line, on sends and reads', async () => {
    expect(secretLine('pty-2')).toBe(SECRET_PTY_2)
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    await h.call('terminal_open', { type: 'shell' })
    const session = h.backend.session('pty-2')
    session.input = { kind: 'password', program: { name: 'sudo', pid: 4711 } }
    const asked = await h.call('terminal_send', { sessionId: 'pty-2', text: 'sudo true' })
    expect(h.text(asked)).toBe(
      'out:sudo true\n[wait: stdin_read]\n[input: password (sudo, pid 4711): a secret is asked for; get it from the user, never invent one]\n' +
        `${SECRET_PTY_2}\n[exit: 0]\n[session: running]`,
    )
    session.lines = ['[sudo] password for dev: ']
    expect(h.text(await h.call('terminal_read', { sessionId: 'pty-2' }))).toBe(
      '[sudo] password for dev: \n[lines: 1-1 of 1]\n[input: password (sudo, pid 4711): a secret is asked for; get it from the user, never invent one]\n' +
        SECRET_PTY_2,
    )
    // Any other state asks for no secret.
    session.input = { kind: 'prompt' }
    expect(h.text(await h.call('terminal_send', { sessionId: 'pty-2', text: 'true' }))).not.toContain('[secret:')
  })

  it('the tools and the guidance tell the model to ask the user, who can type it with dsh-terminal attach', async () => {
    const h = await setup()
    const send = h.root.tools.list().find((tool) => tool.name === 'terminal_send')!
    expect(send.description).toContain('[human: watching] or [human: typing] means a person is attached')
    expect(send.description).toContain('HUMAN_ACTIVE')
    expect(send.description).toContain('dsh-terminal attach <id>')
    const list = h.root.tools.list().find((tool) => tool.name === 'terminal_list')!
    expect(list.description).toContain('human=watching|typing')
    const guidance = h.root.tools.renderGuidance()
    for (const phrase of [
      'they can type it themselves with dsh-terminal attach <session id>',
      'Never guess a password, and never type one you were not given',
      'results then end with [human: watching] or [human: typing]',
      'your sends are refused with HUMAN_ACTIVE',
    ]) {
      expect(guidance).toContain(phrase)
    }
  })
})
