import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type SanitizedChunk, SendOutputBuffer, TerminalSanitizer } from '../src/output'
import { OutputMatcher } from '../src/readiness/output-matcher'
import { raw, utf8 } from './helpers'

/** A sanitizer that already printed `before`, and a send buffer started right after it. */
function startSend(before: string, maxBytes = 1 << 20, maxLineLength?: number) {
  const sanitizer = new TerminalSanitizer(maxLineLength === undefined ? {} : { maxLineLength })
  sanitizer.write(utf8(before))
  const send = new SendOutputBuffer(sanitizer.line, maxBytes)
  const feed = (text: string) => send.append(sanitizer.write(utf8(text)))
  return { sanitizer, send, feed }
}

const PROMPT = '\x1b]133;D;0\x07dsh> '

describe('SendOutputBuffer', () => {
  it('returns what the send caused, without repeating the prompt it started on', () => {
    const { send, feed } = startSend(`motd\r\n${PROMPT}`)
    feed('ls\r\n')
    feed('a.txt\r\nb.txt\r\n')
    feed(PROMPT)
    // Line 0 is the motd, line 1 the prompt `ls` was typed on.
    expect(send.settle()).toEqual({ viewport: 'ls\na.txt\nb.txt\ndsh> ', truncated: false, firstLine: 1 })
  })

  it('consumes through readOutput, then settles with the rest', () => {
    const { send, feed } = startSend(PROMPT)
    feed('make\r\nstep 1\r\n')
    expect(send.readOutput()).toEqual({ delta: 'make\nstep 1\n', truncated: false })
    expect(send.readOutput()).toEqual({ delta: '', truncated: false })
    feed('step 2\r\n')
    expect(send.settle()).toEqual({ viewport: 'step 2\n', truncated: false, firstLine: 2 })
  })

  it('extends a current line that a reader already saw', () => {
    const { send, feed } = startSend('')
    feed('Password: ')
    expect(send.readOutput().delta).toBe('Password: ')
    feed('\r\nok\r\n')
    expect(send.readOutput().delta).toBe('\nok\n')
  })

  it('restates a seen line that a carriage return rewrote, and collapses unseen frames', () => {
    const { send, feed } = startSend('')
    feed('10%')
    expect(send.readOutput().delta).toBe('10%')
    feed('\r20%\r30%')
    expect(send.readOutput().delta).toBe('\n30%')
    feed('\r100%\r\ndone\r\n')
    expect(send.settle().viewport).toBe('\n100%\ndone\n')
  })

  it('keeps the whole line when the pre-send prefix itself was rewritten', () => {
    const { send, feed } = startSend('old prompt> ')
    feed('\rnew\r\n')
    expect(send.settle().viewport).toBe('new prompt> \n')
  })

  it('keeps the newest bytes and reports truncation once, for the read that lost them', () => {
    const { send, feed } = startSend('', 12)
    feed('0123456789\r\nabcdefghij\r\n')
    expect(send.readOutput()).toEqual({ delta: '\nabcdefghij\n', truncated: true })
    expect(send.lostBytes).toBe(10)
    feed('x\r\n')
    expect(send.readOutput()).toEqual({ delta: 'x\n', truncated: false })
  })

  it('bounds a long current line at read time, on a code-point boundary', () => {
    const { send, feed } = startSend('', 9)
    feed('ab' + '😀'.repeat(4))
    const { delta, truncated } = send.readOutput()
    expect(delta).toBe('😀😀')
    expect(truncated).toBe(true)
  })

  it('never splits an emoji when trimming its queue', () => {
    const { send, feed } = startSend('', 10)
    feed('😀😀😀\r\n')
    const { delta, truncated } = send.readOutput()
    expect(delta).toBe('😀😀\n')
    expect(truncated).toBe(true)
  })

  it('reports a line the sanitizer had to clip as truncated', () => {
    const { send, feed } = startSend('', 1 << 20, 4)
    feed('abcdefgh\r\n')
    expect(send.readOutput()).toEqual({ delta: 'efgh\n', truncated: true })
  })

  it('takes no output once settled', () => {
    const { send, feed } = startSend('')
    feed('a\r\n')
    expect(send.settle().viewport).toBe('a\n')
    expect(send.settled).toBe(true)
    feed('late\r\n')
    expect(send.readOutput()).toEqual({ delta: '', truncated: false })
  })

  it('rejects a non-positive budget', () => {
    expect(() => new SendOutputBuffer(new TerminalSanitizer().line, 0)).toThrow(RangeError)
  })

  it('never exceeds its budget, and is truncated exactly when output was lost', () => {
    const chunk = fc.string({ unit: fc.constantFrom('a', 'é', '😀', '\r\n', '\n'), maxLength: 30 })
    fc.assert(
      fc.property(fc.array(fc.tuple(chunk, fc.boolean()), { maxLength: 20 }), fc.integer({ min: 1, max: 40 }), (steps, maxBytes) => {
        const { send, feed } = startSend('', maxBytes)
        const bounded = startSend('', 1 << 20)
        for (const [text, read] of steps) {
          feed(text)
          bounded.feed(text)
          if (!read) continue
          const small = send.readOutput()
          const whole = bounded.send.readOutput()
          expect(Buffer.byteLength(small.delta)).toBeLessThanOrEqual(maxBytes)
          expect(whole.delta.endsWith(small.delta)).toBe(true)
          expect(small.truncated).toBe(small.delta !== whole.delta)
        }
      }),
      { numRuns: 500 },
    )
  })
})

describe('SendOutputBuffer with raw bytes', () => {
  it('accepts chunks straight from the PTY', () => {
    const sanitizer = new TerminalSanitizer()
    const send = new SendOutputBuffer(sanitizer.line, 100)
    send.append(sanitizer.write(raw('\x1b[32mgreen\x1b[0m\r\n')))
    expect(send.settle().viewport).toBe('green\n')
  })
})

describe('SendOutputBuffer line numbers', () => {
  it('names the line its output starts on: the prompt line, or the line a read stopped on', () => {
    const { send, feed } = startSend(`motd\r\n${PROMPT}`)
    feed('make\r\nstep 1\r\nstep')
    expect(send.readOutput()).toEqual({ delta: 'make\nstep 1\nstep', truncated: false })
    feed(' 2\r\ndone\r\n')
    // Line 3 is `step 2`, of which ` 2` was not shown yet.
    expect(send.settle()).toEqual({ viewport: ' 2\ndone\n', truncated: false, firstLine: 3 })
  })

  it('moves forward by the lines its byte bound dropped; a line that lost only its head keeps its number', () => {
    const cut = startSend('', 12)
    cut.feed('0123456789\r\nabcdefghij\r\n')
    expect(cut.send.settle()).toEqual({ viewport: '\nabcdefghij\n', truncated: true, firstLine: 0 })
    const flood = startSend('old\r\n', 10)
    flood.feed(Array.from({ length: 1000 }, (_, index) => `line${index}\r\n`).join(''))
    // Line 1 is `line0`, so `line998` (of which only `8` is left) is line 999.
    expect(flood.send.settle()).toEqual({ viewport: '8\nline999\n', truncated: true, firstLine: 999 })
  })

  it('counts the lines a long current line pushed out of the result', () => {
    const { send, feed } = startSend('', 9)
    feed('ab\r\nc' + '😀'.repeat(4))
    expect(send.settle()).toEqual({ viewport: '😀😀', truncated: true, firstLine: 1 })
  })

  it('leaves firstLine out while a restated line opens the output with a break of its own', () => {
    const restated = startSend('')
    restated.feed('10%')
    restated.send.readOutput()
    restated.feed('\r20%\r\ndone\r\n')
    expect(restated.send.settle()).toEqual({ viewport: '\n20%\ndone\n', truncated: false })
    const current = startSend('')
    current.feed('10%')
    current.send.readOutput()
    current.feed('\r20%')
    expect(current.send.settle()).toEqual({ viewport: '\n20%', truncated: false })
  })

  it('maps again once the bound took the restating break away', () => {
    const dropped = startSend('', 7)
    dropped.feed('10%')
    dropped.send.readOutput()
    dropped.feed('\r20%\r\nabcdef\r\n')
    expect(dropped.send.settle()).toEqual({ viewport: 'abcdef\n', truncated: true, firstLine: 1 })
    const cut = startSend('', 4)
    cut.feed('10%')
    cut.send.readOutput()
    cut.feed('\r20%\r\n')
    expect(cut.send.settle()).toEqual({ viewport: '20%\n', truncated: true, firstLine: 0 })
  })

  it('says nothing for an empty result, nor after a chunk it never saw', () => {
    expect(startSend('x\r\n').send.settle()).toEqual({ viewport: '', truncated: false })
    const { sanitizer, send, feed } = startSend('')
    feed('a\r\n')
    sanitizer.write(utf8('unseen\r\n'))
    feed('b\r\n')
    expect(send.settle()).toEqual({ viewport: 'a\nb\n', truncated: false })
  })

  it('numbers the output after a waitFor match from the line after the matching one', () => {
    const sanitizer = new TerminalSanitizer()
    sanitizer.write(utf8(`motd\r\n${PROMPT}`))
    const send = new SendOutputBuffer(sanitizer.line, 100)
    const found = new OutputMatcher(/READY/, 2).test(sanitizer.write(utf8('run\r\nREADY\r\nafter 1\r\nafter 2\r\ncur')))
    const rest = found?.rest as SanitizedChunk
    send.append(found?.head as SanitizedChunk)
    const after = SendOutputBuffer.fromLineStart(rest.line, 100, rest.firstLine)
    after.append(rest)
    expect(send.settle({ currentLine: false })).toEqual({ viewport: 'run\nREADY', truncated: false, firstLine: 1 })
    expect(after.settle()).toEqual({ viewport: 'after 1\nafter 2\ncur', truncated: false, firstLine: 3 })
  })

  it('maps every result line to its own line whenever it gives firstLine, and gives it unless a break was restated', () => {
    const piece = fc.constantFrom('a', 'é', '😀', 'xyz', '\r\n', '\n', '\r', '\r\n\r\n', 'progress 10%\r', '\x1b[K', '\b')
    const text = fc.array(piece, { maxLength: 10 }).map((pieces) => pieces.join(''))
    fc.assert(
      fc.property(
        text,
        fc.array(fc.tuple(text, fc.boolean()), { maxLength: 12 }),
        fc.integer({ min: 1, max: 60 }),
        fc.option(fc.integer({ min: 1, max: 8 }), { nil: undefined }),
        fc.boolean(),
        (before, steps, maxBytes, maxLineLength, currentLine) => {
          const sanitizer = new TerminalSanitizer(maxLineLength === undefined ? {} : { maxLineLength })
          const completed: string[] = []
          const seen = (chunk: SanitizedChunk) => (completed.push(...chunk.lines), chunk)
          seen(sanitizer.write(utf8(before)))
          const send = new SendOutputBuffer(sanitizer.line, maxBytes)
          let read = false
          for (const [chunk, readNow] of steps) {
            send.append(seen(sanitizer.write(utf8(chunk))))
            if (!readNow) continue
            send.readOutput()
            read = true
          }
          const { viewport, firstLine } = send.settle({ currentLine })
          if (firstLine === undefined) {
            // Only an empty result, or one that opens with the break restating a line a read showed.
            expect(viewport === '' || (read && viewport.startsWith('\n'))).toBe(true)
            return
          }
          const lines = [...completed, sanitizer.line.text()]
          for (const [index, shown] of viewport.split('\n').entries()) {
            const number = firstLine + index
            expect(number).toBeLessThan(lines.length)
            if (index === 0) expect((lines[number] as string).endsWith(shown)).toBe(true)
            else expect(shown).toBe(lines[number])
          }
        },
      ),
      { numRuns: 1000 },
    )
  })
})
