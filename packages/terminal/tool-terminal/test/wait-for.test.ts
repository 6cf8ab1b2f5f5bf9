import { MAX_MATCH_LINE_BYTES, matchLine, TRUNCATION_MARKER } from '../src/internal'
import { LinePattern, MAX_LINE_PATTERN_LENGTH, MAX_LINE_PATTERN_PROGRAM, utf8ByteLength } from 'dsh-basics'
import { afterEach, describe, expect, it } from 'vitest'
import { disposeAll, flush, setup } from './harness'

afterEach(disposeAll)

const INVALID = 'Error: invalid arguments for tool "terminal_send": '

describe('terminal_send waitFor, timeoutMs and idleMs', () => {
  it('passes the wait options to the backend: waitFor as a linear-time LinePattern, the bounds as given', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    await h.call('terminal_send', { sessionId: 'pty-1', text: 'npm run dev', waitFor: 'ready in \\d+ ms', timeoutMs: 120_000, idleMs: 30_000 })
    const request = h.backend.session('pty-1').sends[0]!.request
    expect(request.waitFor).toBeInstanceOf(LinePattern)
    expect({ source: request.waitFor?.source, timeoutMs: request.timeoutMs, idleMs: request.idleMs }).toEqual({
      source: 'ready in \\d+ ms',
      timeoutMs: 120_000,
      idleMs: 30_000,
    })
    expect(request.waitFor?.firstMatch('VITE ready in 312 ms')).toBe('ready in 312 ms')
    // Without them the backend keeps its own bounds: nothing is passed.
    await h.call('terminal_send', { sessionId: 'pty-1', text: 'ls' })
    expect(Object.keys(h.backend.session('pty-1').sends[1]!.request).sort()).toEqual(['callId', 'signal', 'submit', 'text'])
  })

  it('renders output_match with the matched line, and puts the match into meta', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    const session = h.backend.session('pty-1')
    session.replies.push('hang')
    session.input = { kind: 'busy', program: { name: 'node', pid: 4711, elapsedMs: 2500 }, reading: 'unproven' }
    const pending = h.call('terminal_send', { sessionId: 'pty-1', text: 'npm run dev', waitFor: 'ready|listening' })
    await flush()
    const send = session.sends[0]!
    send.emit('> vite\n\n  VITE v5 rea')
    expect(send.settled).toBe(false)
    send.emit('dy in 300 ms\n  Local: http://localhost:5173/\n')
    const result = await pending
    expect(h.text(result)).toBe(
      [
        '> vite',
        '',
        '  VITE v5 ready in 300 ms',
        '  Local: http://localhost:5173/',
        '',
        '[wait: output_match]',
        '[match: VITE v5 ready in 300 ms]',
        '[input: none; busy: node, pid 4711, running 2.5 s]',
        '[session: running]',
      ].join('\n'),
    )
    expect(result.meta).toMatchObject({
      waitReason: 'output_match',
      match: { text: 'ready', line: '  VITE v5 ready in 300 ms' },
      input: { kind: 'busy', program: { name: 'node', pid: 4711, elapsedMs: 2500 }, reading: 'unproven' },
    })
    expect(result.meta && 'exitCode' in result.meta).toBe(false)
  })

  it('shows at most about 200 bytes of the matched line, cut on a code-point boundary, on one line', () => {
    const line = `${'€'.repeat(100)} ready`
    const shown = matchLine({ text: 'ready', line })
    expect(utf8ByteLength(shown)).toBeLessThanOrEqual(MAX_MATCH_LINE_BYTES + utf8ByteLength('[match: ]'))
    expect(shown).toMatch(/^\[match: €+…\]$/)
    expect(shown).not.toContain('\uFFFD')
    expect(matchLine({ text: 'ok', line: 'tab\there\rok' })).toBe('[match: tab here ok]')
  })

  it('drops the match line before any required line under a tiny cap', async () => {
    const h = await setup({ config: { maxResultBytes: 64 } })
    await h.call('terminal_open', { type: 'shell' })
    h.backend.session('pty-1').replies.push({
      viewport: 'x'.repeat(100),
      waitReason: 'output_match',
      exitCode: undefined,
      match: { text: 'ready', line: `server ${'r'.repeat(80)} ready` },
    })
    const sent = await h.call('terminal_send', { sessionId: 'pty-1', text: 'serve', waitFor: 'ready' })
    expect(h.text(sent)).toBe(`xxxxx\n[wait: output_match]\n[session: running]\n${TRUNCATION_MARKER}`)
    expect(sent.meta?.match).toEqual({ text: 'ready', line: `server ${'r'.repeat(80)} ready` })
  })

  it('refuses a pattern that does not compile, naming it, and writes nothing', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    for (const background of [false, true]) {
      const bad = await h.call('terminal_send', { sessionId: 'pty-1', text: 'serve', waitFor: 'ready(', run_in_background: background })
      expect([bad.error?.code, h.text(bad)]).toEqual([
        'INVALID_ARGUMENTS',
        `${INVALID}waitFor: waitFor "ready(" is not a valid regular expression (missing closing ): "ready(")`,
      ])
    }
    const empty = await h.call('terminal_send', { sessionId: 'pty-1', text: 'serve', waitFor: '' })
    expect(h.text(empty)).toBe(`${INVALID}waitFor: waitFor must not be empty: it would match the first line of output`)
    const huge = await h.call('terminal_send', { sessionId: 'pty-1', text: 'serve', waitFor: `${'a'.repeat(500)}[` })
    expect(h.text(huge)).toMatch(/^Error: invalid arguments for tool "terminal_send": waitFor: waitFor "a{100}" is not a valid/)
    const tooLong = await h.call('terminal_send', { sessionId: 'pty-1', text: 'serve', waitFor: 'a'.repeat(MAX_LINE_PATTERN_LENGTH + 1) })
    expect(h.text(tooLong)).toBe(`${INVALID}waitFor: waitFor must be at most ${MAX_LINE_PATTERN_LENGTH} characters long`)
    expect(h.backend.session('pty-1').sends).toEqual([])
    expect(h.root.jobs.list(h.agent)).toEqual([])
  })

  it('refuses backtracking-only syntax as UNSUPPORTED_PATTERN, saying what to write instead, and writes nothing', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    const refusals: [string, string][] = [
      ['(ab)\\1', 'uses a backreference (\\1), which the linear-time matcher does not take; write the repeated text out again'],
      ['(?<x>ab)\\k<x>', 'uses a named backreference'],
      ['x(?=y)', 'uses a lookahead ((?=…) or (?!…)), which the linear-time matcher does not take; match the text itself'],
      ['(?<=port )\\d+', 'uses a lookbehind ((?<=…) or (?<!…)), which the linear-time matcher does not take; include the text before it'],
      ['\\u2713 done', 'uses a \\u escape, which the linear-time matcher does not take; write \\x{2713} for \\u2713'],
      ['a{1001}', 'uses a repeat count above 1000'],
      ['.{0,300}ready', `is too large for the linear-time matcher (program size 607, at most ${MAX_LINE_PATTERN_PROGRAM})`],
    ]
    for (const background of [false, true]) {
      for (const [pattern, reason] of refusals) {
        const result = await h.call('terminal_send', { sessionId: 'pty-1', text: 'serve', waitFor: pattern, run_in_background: background })
        expect({ pattern, code: result.error?.code, isError: result.isError }).toEqual({ pattern, code: 'UNSUPPORTED_PATTERN', isError: true })
        expect(h.text(result)).toContain(`Error: waitFor ${JSON.stringify(pattern)} ${reason}`)
      }
    }
    expect(h.backend.session('pty-1').sends).toEqual([])
    expect(h.root.jobs.list(h.agent)).toEqual([])
  })

  it('takes inline flags: (?i) ignores case', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    await h.call('terminal_send', { sessionId: 'pty-1', text: 'serve', waitFor: '(?i)server (is )?ready' })
    const pattern = h.backend.session('pty-1').sends[0]!.request.waitFor
    expect([pattern?.firstMatch('SERVER IS READY'), pattern?.firstMatch('Server ready.'), pattern?.firstMatch('server starting')]).toEqual([
      'SERVER IS READY',
      'Server ready',
      undefined,
    ])
  })

  it('refuses timeoutMs and idleMs below 1, above maxTimeoutMs, or fractional, naming the bound', async () => {
    const h = await setup({ config: { maxTimeoutMs: 60_000 } })
    await h.call('terminal_open', { type: 'shell' })
    const refused = async (args: Record<string, unknown>) => {
      const result = await h.call('terminal_send', { sessionId: 'pty-1', text: 'make', ...args })
      expect(result.error?.code).toBe('INVALID_ARGUMENTS')
      return h.text(result).slice(INVALID.length)
    }
    expect(await refused({ timeoutMs: 0 })).toBe('timeoutMs: timeoutMs must be at least 1 ms')
    // A foreground send is held to maxTimeoutMs even where a background one may go further.
    expect(await refused({ timeoutMs: 600_001 })).toBe(
      'timeoutMs: timeoutMs must be at most 600000 ms (for a background send, the larger of maxTimeoutMs and backgroundTimeoutMs)',
    )
    expect(await refused({ timeoutMs: 60_001 })).toBe('timeoutMs: timeoutMs must be at most 60000 ms (maxTimeoutMs) unless run_in_background is set')
    expect(await refused({ timeoutMs: 1.5 })).toBe('timeoutMs: timeoutMs must be an integer number of milliseconds')
    expect(await refused({ idleMs: 0 })).toBe('idleMs: idleMs must be at least 1 ms')
    expect(await refused({ idleMs: 60_001 })).toBe('idleMs: idleMs must be at most 60000 ms (maxTimeoutMs)')
    expect(await refused({ idleMs: 60_001, run_in_background: true })).toBe('idleMs: idleMs must be at most 60000 ms (maxTimeoutMs)')
    expect(h.backend.session('pty-1').sends).toEqual([])
    expect((await h.call('terminal_send', { sessionId: 'pty-1', text: 'make', timeoutMs: 60_000, idleMs: 1 })).isError).toBe(false)
  })

  it('without background sends, timeoutMs is bounded by maxTimeoutMs alone', async () => {
    const h = await setup({ config: { enableRunInBackground: false, maxTimeoutMs: 5_000 } })
    await h.call('terminal_open', { type: 'shell' })
    const result = await h.call('terminal_send', { sessionId: 'pty-1', text: 'make', timeoutMs: 5_001 })
    expect(h.text(result)).toBe(`${INVALID}timeoutMs: timeoutMs must be at most 5000 ms (maxTimeoutMs)`)
  })
})

describe('background sends with waitFor, timeoutMs and idleMs', () => {
  it('ends the job when a line matches; the job detail says output_match', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    const session = h.backend.session('pty-1')
    session.replies.push('hang')
    await h.call('terminal_send', { sessionId: 'pty-1', text: 'python3 -m http.server', waitFor: '^Serving HTTP', run_in_background: true })
    const send = session.sends[0]!
    expect({ source: send.request.waitFor?.source, settleOnSilence: send.request.settleOnSilence, timeoutMs: send.request.timeoutMs }).toEqual({
      source: '^Serving HTTP',
      settleOnSilence: false,
      timeoutMs: 600_000,
    })
    send.emit('Serving HTTP on 0.0.0.0 port 8000 ...\n')
    expect(h.text(await h.call('job_output', { jobId: 'pty-send-1', wait: true }))).toBe(
      'Serving HTTP on 0.0.0.0 port 8000 ...\n[status: completed, wait: output_match, session: running]',
    )
  })

  it('takes its own timeoutMs up to the larger of maxTimeoutMs and backgroundTimeoutMs', async () => {
    const h = await setup({ config: { maxTimeoutMs: 60_000, backgroundTimeoutMs: 3_600_000 } })
    await h.call('terminal_open', { type: 'shell' })
    const session = h.backend.session('pty-1')
    await h.call('terminal_send', { sessionId: 'pty-1', text: 'make', timeoutMs: 3_600_000, run_in_background: true })
    await h.root.jobs.wait('pty-send-1', h.agent)
    expect(session.sends[0]!.request.timeoutMs).toBe(3_600_000)
    const over = await h.call('terminal_send', { sessionId: 'pty-1', text: 'make', timeoutMs: 3_600_001, run_in_background: true })
    expect(h.text(over)).toBe(
      `${INVALID}timeoutMs: timeoutMs must be at most 3600000 ms (for a background send, the larger of maxTimeoutMs and backgroundTimeoutMs)`,
    )
    // Below the configured background bound, a short timeout is the model's to choose.
    await h.call('terminal_send', { sessionId: 'pty-1', text: 'make', timeoutMs: 10, run_in_background: true })
    await h.root.jobs.wait('pty-send-2', h.agent)
    expect(session.sends[1]!.request.timeoutMs).toBe(10)
  })

  it('lets silence end it only when the model gave idleMs', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    await h.call('terminal_send', { sessionId: 'pty-1', text: 'make', idleMs: 20_000, run_in_background: true })
    await h.root.jobs.wait('pty-send-1', h.agent)
    const request = h.backend.session('pty-1').sends[0]!.request
    expect({ idleMs: request.idleMs, settleOnSilence: request.settleOnSilence }).toEqual({ idleMs: 20_000, settleOnSilence: undefined })
  })
})
