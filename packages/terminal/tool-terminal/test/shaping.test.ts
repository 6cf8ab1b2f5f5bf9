import { fitResult, TRUNCATION_MARKER } from '../src/internal'
import { utf8ByteLength } from 'dsh-basics'
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { disposeAll, type Harness, setup } from './harness'

// Results sized for a model: long output keeps its head and tail around one line naming the
// terminal_read call for the middle, repeated lines fold, and every output call takes maxBytes.

afterEach(disposeAll)

const ELISION = /^\[… (\d+) lines \(([^)]+)\) left out; terminal_read (\{[^\n]*\}) returns them\]$/m

/** A session whose scrollback holds `before` lines, then a send whose viewport is `lines` (starting on the next line). */
async function floodedSession(lines: string[], config: Parameters<typeof setup>[0] = {}, before = 4) {
  const h = await setup(config)
  await h.call('terminal_open', { type: 'shell' })
  const session = h.backend.session('pty-1')
  const earlier = Array.from({ length: before }, (_, index) => `earlier ${index + 1}`)
  session.lines = [...earlier, ...lines]
  session.replies.push({ viewport: lines.join('\n'), waitReason: 'stdin_read', exitCode: 0, firstLine: before + 1 })
  const result = await h.call('terminal_send', { sessionId: 'pty-1', text: 'make test' })
  return { h, session, result, text: h.text(result) }
}

/** The body lines of a result: everything before its first `[wait:`/`[lines:` line. */
function bodyOf(text: string): string[] {
  const lines = text.split('\n')
  return lines.slice(
    0,
    lines.findIndex((line) => /^\[(wait|lines): /.test(line)),
  )
}

async function readBack(h: Harness, text: string) {
  const call = ELISION.exec(text)
  if (!call) throw new Error(`no elision line with a read call in:\n${text}`)
  const args = JSON.parse(call[3]!) as { sessionId: string; fromLine: number; count: number; maxBytes?: number }
  return { args, count: Number(call[1]), read: await h.call('terminal_read', args) }
}

describe('a long send result: head, tail and the way back', () => {
  const seq = Array.from({ length: 3000 }, (_, index) => String(index + 1))
  const lines = ['seq 1 3000', ...seq, 'dsh> ']

  it('keeps the beginning and the end within the window, with one elision line between them', async () => {
    const { text, result } = await floodedSession(lines, { config: { defaultMaxBytes: 2048 } })
    expect(utf8ByteLength(text)).toBeLessThanOrEqual(2048)
    const body = bodyOf(text)
    expect(body.slice(0, 3)).toEqual(['seq 1 3000', '1', '2'])
    expect(body.at(-2)).toBe('3000')
    expect(body.at(-1)).toBe('dsh> ')
    expect(text.match(new RegExp(ELISION.source, 'gm'))).toHaveLength(1)
    expect(text.endsWith(`[wait: stdin_read]\n[exit: 0]\n[session: running]\n${TRUNCATION_MARKER}`)).toBe(true)
    // The elided lines are exactly the ones missing between head and tail.
    const elision = body.findIndex((line) => ELISION.test(line))
    const head = body.slice(0, elision)
    const tail = body.slice(elision + 1)
    const count = Number(ELISION.exec(text)![1])
    expect(head.length + count + tail.length).toBe(lines.length)
    expect(result.meta?.output).toEqual({
      bytes: utf8ByteLength(lines.join('\n')),
      lines: lines.length,
      shownBytes: expect.any(Number),
      foldedLines: 0,
      omittedLines: count,
      omittedBytes: utf8ByteLength(lines.slice(head.length, head.length + count).join('\n')) + 1,
      omitted: { fromLine: 5 + head.length, count },
    })
    expect(result.meta?.truncated).toBe(true)
  })

  it('the terminal_read call the elision line names returns exactly the elided lines', async () => {
    const { h, text } = await floodedSession(lines, { config: { defaultMaxBytes: 2048 } })
    const body = bodyOf(text)
    const elision = body.findIndex((line) => ELISION.test(line))
    const { args, count, read } = await readBack(h, text)
    // The middle needs a larger window than the default: the call asks for one that holds it.
    expect(args.maxBytes).toBeGreaterThan(2048)
    expect(args).toMatchObject({ sessionId: 'pty-1', fromLine: 5 + elision, count })
    expect(bodyOf(h.text(read))).toEqual(lines.slice(elision, elision + count))
    expect(h.text(read)).toContain(`[lines: ${5 + elision}-${4 + elision + count} of ${4 + lines.length}]`)
  })

  it('a middle larger than maxResultBytes comes back shaped again, naming the next call', async () => {
    const big = ['seq', ...Array.from({ length: 3000 }, (_, index) => `${index + 1} ${'x'.repeat(30)}`), 'dsh> ']
    const { h, text } = await floodedSession(big, { config: { maxResultBytes: 16384, defaultMaxBytes: 1024 } })
    const { args, read } = await readBack(h, text)
    expect(args.maxBytes).toBe(16384)
    const page = h.text(read)
    expect(utf8ByteLength(page)).toBeLessThanOrEqual(16384)
    const next = ELISION.exec(page)
    expect(next).not.toBeNull()
    expect(JSON.parse(next![3]!).fromLine).toBeGreaterThan(args.fromLine)
  })

  it("the output's beginning, kept apart by the backend, leads the result; the lines it lost are inside the elision", async () => {
    const all = ['seq 1 5000', ...Array.from({ length: 5000 }, (_, index) => String(index + 1)), 'dsh> ']
    const headLines = all.slice(0, 300)
    const tailLines = all.slice(4000)
    const lost = all.slice(300, 4000)
    const h = await setup({ config: { defaultMaxBytes: 2048 } })
    await h.call('terminal_open', { type: 'shell' })
    const session = h.backend.session('pty-1')
    session.lines = ['earlier 1', 'earlier 2', ...all]
    session.replies.push({
      viewport: tailLines.join('\n'),
      firstLine: 3 + 4000,
      truncated: true,
      waitReason: 'stdin_read',
      outputHead: { text: headLines.join('\n'), firstLine: 3, gapLines: lost.length, gapBytes: utf8ByteLength(lost.join('\n')) + 1 },
    })
    const result = await h.call('terminal_send', { sessionId: 'pty-1', text: 'seq 1 5000' })
    const text = h.text(result)
    expect(utf8ByteLength(text)).toBeLessThanOrEqual(2048)
    const body = bodyOf(text)
    expect(body.slice(0, 3)).toEqual(['seq 1 5000', '1', '2'])
    expect(body.slice(-2)).toEqual(['5000', 'dsh> '])
    const at = body.findIndex((line) => ELISION.test(line))
    const { args, count, read } = await readBack(h, text)
    expect(at + count + (body.length - at - 1)).toBe(all.length)
    expect(args.fromLine).toBe(3 + at)
    expect(result.meta?.output).toMatchObject({ lines: all.length, omittedLines: count, omitted: { fromLine: 3 + at, count } })
    // About 24 KiB of short lines: the named call asks for a window that holds them all.
    expect(bodyOf(h.text(read))).toEqual(all.slice(at, at + count))
  })

  it('without line numbers from the backend the elision line has no call', async () => {
    const h = await setup({ config: { defaultMaxBytes: 512 } })
    await h.call('terminal_open', { type: 'shell' })
    h.backend.session('pty-1').replies.push({ viewport: lines.join('\n'), waitReason: 'stdin_read' })
    const text = h.text(await h.call('terminal_send', { sessionId: 'pty-1', text: 'seq 1 3000' }))
    expect(text).toMatch(/^\[… \d+ lines \([^)]+\) left out\]$/m)
    expect(text).not.toContain('terminal_read')
  })

  it('a failing test run keeps its summary at the end', async () => {
    const run = [
      'pnpm test',
      ...Array.from({ length: 400 }, (_, index) => ` ✓ test/unit-${index}.test.ts (12 tests) ${index} ms`),
      ' FAIL  test/parser.test.ts > parses a quoted string',
      'AssertionError: expected "a b" to be "a\\"b"',
      ' Test Files  1 failed | 400 passed (401)',
      '      Tests  1 failed | 4800 passed (4801)',
      'dsh> ',
    ]
    const { text } = await floodedSession(run, { config: { defaultMaxBytes: 4096 } })
    expect(utf8ByteLength(text)).toBeLessThanOrEqual(4096)
    for (const line of run.slice(-5)) expect(bodyOf(text)).toContain(line)
    expect(bodyOf(text)[0]).toBe('pnpm test')
  })
})

describe('repeated lines', () => {
  it('fold into one line with an exact count; the scrollback keeps every line', async () => {
    const lines = ['make', ...Array.from({ length: 1000 }, () => 'warning: deprecated API'), 'done', 'dsh> ']
    const { h, text, result } = await floodedSession(lines)
    expect(bodyOf(text)).toEqual(['make', 'warning: deprecated API', '[… 999 more identical lines]', 'done', 'dsh> '])
    expect(result.meta?.output).toMatchObject({ lines: 1003, foldedLines: 999, omittedLines: 0 })
    expect(result.meta?.truncated).toBe(false)
    const read = h.text(await h.call('terminal_read', { sessionId: 'pty-1', fromLine: 6, count: 3, maxBytes: 1024 }))
    expect(bodyOf(read)).toEqual(['warning: deprecated API', 'warning: deprecated API', 'warning: deprecated API'])
  })

  it('never across different lines, and not at all with foldRepeatedLines: false', async () => {
    const lines = ['a', 'b', ...Array.from({ length: 50 }, (_, index) => `row ${index % 2}`), 'dsh> ']
    const { text } = await floodedSession(lines)
    expect(bodyOf(text)).toEqual(lines)
    const same = ['x', ...Array.from({ length: 50 }, () => 'same line of output'), 'dsh> ']
    expect(bodyOf((await floodedSession(same, { config: { foldRepeatedLines: false } })).text)).toEqual(same)
  })
})

describe('maxBytes', () => {
  it('sizes one call: send and read results stay within it', async () => {
    const lines = Array.from({ length: 500 }, (_, index) => `line ${index}`)
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    const session = h.backend.session('pty-1')
    session.lines = lines
    session.replies.push({ viewport: lines.join('\n'), waitReason: 'stdin_read', firstLine: 1 })
    const sent = await h.call('terminal_send', { sessionId: 'pty-1', text: 'x', maxBytes: 700 })
    expect(utf8ByteLength(h.text(sent))).toBeLessThanOrEqual(700)
    expect(h.text(sent)).toMatch(ELISION)
    const read = await h.call('terminal_read', { sessionId: 'pty-1', maxBytes: 300 })
    expect(utf8ByteLength(h.text(read))).toBeLessThanOrEqual(300)
    expect(h.text(read)).toContain('line 499\n[lines: 1-500 of 500]')
  })

  it('is refused below 64 bytes, above maxResultBytes, with run_in_background, and fromLine with offset', async () => {
    const h = await setup({ config: { maxResultBytes: 8192 } })
    await h.call('terminal_open', { type: 'shell' })
    const refusals: [string, object, RegExp][] = [
      ['terminal_send', { text: 'x', maxBytes: 63 }, /maxBytes must be at least 64 bytes/],
      ['terminal_send', { text: 'x', maxBytes: 8193 }, /maxBytes must be at most 8192 bytes \(maxResultBytes\)/],
      ['terminal_send', { text: 'x', maxBytes: 1.5 }, /maxBytes must be an integer/],
      ['terminal_send', { text: 'x', maxBytes: 1024, run_in_background: true }, /give maxBytes to job_output instead/],
      ['terminal_read', { maxBytes: 10 }, /maxBytes must be at least 64 bytes/],
      ['terminal_read', { offset: 1, fromLine: 3 }, /either offset .* or fromLine/],
      ['terminal_read', { fromLine: 0 }, /fromLine must be at least 1/],
    ]
    for (const [tool, args, message] of refusals) {
      const result = await h.call(tool, { sessionId: 'pty-1', ...args })
      expect(result.error?.code, `${tool} ${JSON.stringify(args)}`).toBe('INVALID_ARGUMENTS')
      expect(h.text(result)).toMatch(message)
    }
    expect(h.backend.session('pty-1').sends).toHaveLength(0)
  })

  it('fromLine reaches the backend as an absolute line to read forward from', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    const session = h.backend.session('pty-1')
    session.lines = Array.from({ length: 50 }, (_, index) => `l${index + 1}`)
    const read = await h.call('terminal_read', { sessionId: 'pty-1', fromLine: 10, count: 3 })
    expect(session.reads.at(-1)).toEqual({ count: 3, fromLine: 10 })
    expect(h.text(read)).toBe('l10\nl11\nl12\n[lines: 10-12 of 50]')
  })
})

describe('fitResult with shaping', () => {
  it('never exceeds the cap nor splits a code point, wide and combining characters at every cut (property)', () => {
    const unit = fc.constantFrom('a', '漢', '😀', 'e\u0301', '\n', '\n', 'ok\n')
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 300 }), fc.integer({ min: 64, max: 600 }), (parts, maxBytes) => {
        const body = parts.join('')
        const fitted = fitResult({ body, trailer: [{ text: '[wait: stdin_read]' }], bodyFirstLine: 1 }, maxBytes, { foldRepeats: true })
        expect(utf8ByteLength(fitted.text)).toBeLessThanOrEqual(maxBytes)
        expect(fitted.text).not.toContain('\uFFFD')
        expect(Buffer.from(fitted.text).toString()).toBe(fitted.text)
        expect(fitted.text).toContain('[wait: stdin_read]')
        expect(fitted.text.split(TRUNCATION_MARKER).length - 1).toBe(fitted.truncated ? 1 : 0)
      }),
      { numRuns: 300 },
    )
  })
})
