import { boundContent, EARLIER_MARKER, fitResult, TRUNCATION_MARKER } from '../src/internal'
import { utf8ByteLength } from 'dsh-basics'
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { disposeAll, setup } from './harness'

afterEach(disposeAll)

const markers = (text: string) => text.split(TRUNCATION_MARKER).length - 1

describe('fitResult', () => {
  const send = {
    body: 'a'.repeat(100),
    trailer: [{ text: '[wait: stdin_read]' }, { text: '[exit: 0]', optional: true }, { text: '[session: running]' }],
  }

  it('returns the whole layout when it fits, with the marker only if the source lost bytes', () => {
    expect(fitResult({ body: 'hi', trailer: [{ text: '[x]' }] }, 100)).toMatchObject({ text: 'hi\n[x]', truncated: false })
    expect(fitResult({ body: 'hi', truncated: true }, 100)).toMatchObject({ text: `hi\n${TRUNCATION_MARKER}`, truncated: true })
    expect(fitResult({ head: 'head', body: '' }, 100)).toMatchObject({ text: 'head', truncated: false })
  })

  it('keeps the tail of the body and every metadata line, exactly at the cap', () => {
    const fitted = fitResult(send, 80)
    expect(fitted.text).toBe(`${'a'.repeat(13)}\n[wait: stdin_read]\n[exit: 0]\n[session: running]\n${TRUNCATION_MARKER}`)
    expect(utf8ByteLength(fitted.text)).toBe(80)
    expect(fitted.truncated).toBe(true)
  })

  it('renders earlier output first under its marker; under a cap the newest output keeps priority', () => {
    const trailer = [{ text: '[wait: stdin_read]' }]
    expect(fitResult({ earlier: 'LATE\ndsh> ', body: '(no new output)', trailer }, 1000).text).toBe(
      `${EARLIER_MARKER}\nLATE\ndsh> \n(no new output)\n[wait: stdin_read]`,
    )
    const layout = { earlier: `old-${'é'.repeat(50)}`, body: 'n'.repeat(40), trailer }
    const whole = fitResult(layout, 1000).text
    for (let cap = 40; cap < utf8ByteLength(whole); cap += 1) {
      const fitted = fitResult(layout, cap)
      expect(utf8ByteLength(fitted.text)).toBeLessThanOrEqual(cap)
      expect(fitted.text).not.toContain('\uFFFD')
      expect(fitted.truncated).toBe(true)
      const body = fitted.text.split('\n').at(-3) as string
      // The earlier part appears only once the newest output is whole, and then with its marker.
      if (fitted.text.includes('old') || fitted.text.includes('é')) {
        expect(fitted.text.startsWith(`${EARLIER_MARKER}\n`)).toBe(true)
        expect(body).toBe('n'.repeat(40))
      } else expect(fitted.text).not.toContain(EARLIER_MARKER)
    }
    expect(fitResult(layout, utf8ByteLength(whole) - 1).text).toMatch(new RegExp(`^\\${EARLIER_MARKER.slice(0, -1)}\\]\\né+\\nn{40}\\n`))
  })

  it('drops optional lines, then compacts the head, then cuts the metadata from its end', () => {
    expect(fitResult(send, 64).text).toBe(`${'a'.repeat(7)}\n[wait: stdin_read]\n[session: running]\n${TRUNCATION_MARKER}`)
    const open = {
      head: 'started terminal session pty-1 (main) [type: shell]',
      compactHead: 'started terminal session pty-1 [type: shell]',
      body: 'motd'.repeat(9),
    }
    expect(fitResult(open, 64).text).toBe(`started terminal session pty-1 [type: shell]\n${TRUNCATION_MARKER}`)
    const tiny = fitResult({ head: 'Error: '.padEnd(100, 'x'), body: '' }, 30)
    expect(tiny.text).toBe(`Error: xxxx\n${TRUNCATION_MARKER}`)
  })

  it('never splits a code point and holds exactly one marker (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 200 }), fc.boolean(), fc.integer({ min: 64, max: 400 }), (body, truncated, maxBytes) => {
        const fitted = fitResult({ head: 'h pty-1', body, trailer: [{ text: '[wait: timeout]' }], truncated }, maxBytes)
        expect(utf8ByteLength(fitted.text)).toBeLessThanOrEqual(maxBytes)
        // A replacement character the body already carried is output, not a split we made.
        if (!body.includes('\uFFFD')) expect(fitted.text).not.toContain('\uFFFD')
        expect(fitted.text.startsWith('h pty-1')).toBe(true)
        expect(fitted.text).toContain('[wait: timeout]')
        if (!body.includes(TRUNCATION_MARKER)) expect(markers(fitted.text)).toBe(fitted.truncated ? 1 : 0)
        if (fitted.truncated && !body.includes(TRUNCATION_MARKER)) expect(fitted.text.endsWith(TRUNCATION_MARKER)).toBe(true)
      }),
    )
  })

  it('cuts multi-byte output on code-point boundaries', () => {
    // 37 bytes of metadata leave 11 for the body; the 11th byte from the end is inside an emoji.
    const fitted = fitResult({ body: '日本語テキスト😀😀😀', trailer: [{ text: '[lines: 1-1 of 1]' }] }, 48)
    expect(fitted.text).toBe(`😀😀\n[lines: 1-1 of 1]\n${TRUNCATION_MARKER}`)
    expect(utf8ByteLength(fitted.text)).toBe(45)
  })
})

describe('boundContent (the last-mile finalizeContent)', () => {
  it('leaves fitting texts and multi-block content alone', () => {
    const one = [{ type: 'text' as const, text: 'short' }]
    expect(boundContent(one, 64)).toBe(one)
    const two = [
      { type: 'text' as const, text: 'x'.repeat(500) },
      { type: 'text' as const, text: 'policy' },
    ]
    expect(boundContent(two, 64)).toBe(two)
  })

  it('keeps the first line of an unknown text and the tail of the rest, with one marker', () => {
    const text = `Error: replaced by policy\n${'z'.repeat(300)}\n${TRUNCATION_MARKER}`
    const [bounded] = boundContent([{ type: 'text', text }], 64)
    expect(bounded!.text).toBe(`Error: replaced by policy\n${'z'.repeat(19)}\n${TRUNCATION_MARKER}`)
  })
})

describe('maxResultBytes through ctx.tools.execute', () => {
  it('at 64 bytes: ids, wait and session lines survive; the body keeps its tail', async () => {
    const h = await setup({ config: { maxResultBytes: 64 } })
    h.backend.motd = 'm'.repeat(500)
    const opened = await h.call('terminal_open', { type: 'shell', name: 'main' })
    expect(h.text(opened)).toBe(`started terminal session pty-1 [type: shell]\n${TRUNCATION_MARKER}`)
    expect(opened.meta).toMatchObject({ sessionId: 'pty-1', name: 'main', truncated: true })

    h.backend.session('pty-1').replies.push({ viewport: `${'x'.repeat(1000)}END`, exitCode: 0 })
    const sent = await h.call('terminal_send', { sessionId: 'pty-1', text: 'flood' })
    expect(h.text(sent)).toBe(`xxxxEND\n[wait: stdin_read]\n[session: running]\n${TRUNCATION_MARKER}`)
    expect(sent.meta).toMatchObject({ exitCode: 0, waitReason: 'stdin_read', truncated: true })

    h.backend.session('pty-1').lines = Array.from({ length: 50 }, (_, i) => `line ${i + 1}`)
    const read = await h.call('terminal_read', { sessionId: 'pty-1' })
    expect(h.text(read)).toBe(`7\nline 48\nline 49\nline 50\n[lines: 1-50 of 50]\n${TRUNCATION_MARKER}`)
    expect(utf8ByteLength(h.text(read))).toBe(64)

    const background = await h.call('terminal_send', { sessionId: 'pty-1', text: 'sleep 1', run_in_background: true })
    expect(h.text(background)).toBe('started background job pty-send-1')
  })

  it('at 64 bytes: errors are bounded too, keeping their beginning', async () => {
    const h = await setup({ config: { maxResultBytes: 64 } })
    const result = await h.call('terminal_send', { sessionId: '', text: 'x' })
    expect(h.text(result)).toBe(`Error: invalid arguments for tool "terminal_s\n${TRUNCATION_MARKER}`)
    expect(utf8ByteLength(h.text(result))).toBe(64)
    expect(result.error?.code).toBe('INVALID_ARGUMENTS')
    const long = await h.call('terminal_read', { sessionId: `pty-${'9'.repeat(200)}` })
    expect(h.text(long).startsWith('Error: unknown PTY session pty-999')).toBe(true)
    expect(utf8ByteLength(h.text(long))).toBeLessThanOrEqual(64)
  })

  it('at 256 bytes: every line survives, including [exit: n] and the head with its name', async () => {
    const h = await setup({ config: { maxResultBytes: 256 } })
    h.backend.motd = 'm'.repeat(500)
    const opened = await h.call('terminal_open', { type: 'shell', name: 'main' })
    expect(h.text(opened)).toBe(`started terminal session pty-1 (main) [type: shell]\n${'m'.repeat(185)}\n${TRUNCATION_MARKER}`)
    h.backend.session('pty-1').replies.push({
      viewport: '€'.repeat(300),
      exitCode: 3,
      waitReason: 'inferred_idle',
      sessionStatus: { kind: 'exited', exitCode: 3, signal: null },
      truncated: true,
    })
    const sent = h.text(await h.call('terminal_send', { sessionId: 'pty-1', text: 'x' }))
    const trailer = `\n[wait: inferred_idle]\n[exit: 3]\n[session: exited code=3 signal=null]\n${TRUNCATION_MARKER}`
    expect(sent).toBe('€'.repeat((256 - utf8ByteLength(trailer)) / 3) + trailer)
    expect(markers(sent)).toBe(1)
    expect(utf8ByteLength(sent)).toBe(256)
  })
})
