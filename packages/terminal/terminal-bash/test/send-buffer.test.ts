import fc from 'fast-check'
import { LinePattern } from 'dsh-basics'
import { describe, expect, it } from 'vitest'
import { type SanitizedChunk, SendOutputBuffer, type SendOutputHead, type SendOutputResult, TerminalSanitizer } from '../src/output'
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
    // The head (a 2-byte bound) has `ab`; `c😀😀` of the current line is lost.
    expect(send.settle()).toEqual({ viewport: '😀😀', truncated: true, firstLine: 1, head: { text: 'ab', firstLine: 0, gapLines: 0, gapBytes: 9 } })
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
    const found = new OutputMatcher(LinePattern.compile('READY'), 2).test(sanitizer.write(utf8('run\r\nREADY\r\nafter 1\r\nafter 2\r\ncur')))
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

/** `count` numbered lines `from`, `from + 1`, … as the PTY writes them. */
function numbered(from: number, count: number): string {
  return Array.from({ length: count }, (_, index) => `${from + index}\r\n`).join('')
}

/**
 * The head, the newline after it, the gap and the viewport make up `whole` (the same send read
 * without a bound) exactly: in bytes, and in lines with every line in one place once.
 */
function expectAccounted(whole: string, result: SendOutputResult): void {
  const head = result.head as SendOutputHead
  const headLines = head.text.split('\n')
  const wholeLines = whole.split('\n')
  expect(wholeLines.slice(0, headLines.length)).toEqual(headLines)
  expect(whole.endsWith(result.viewport)).toBe(true)
  const gap = whole.slice(head.text.length + 1, whole.length - result.viewport.length)
  expect(head.gapBytes).toBe(Buffer.byteLength(gap))
  expect(headLines.length + head.gapLines + result.viewport.split('\n').length).toBe(wholeLines.length)
}

describe('SendOutputBuffer head', () => {
  it('keeps the first lines after the prompt up to a quarter of its bound, and counts what it lost before the viewport', () => {
    const { send, feed } = startSend(`motd\r\n${PROMPT}`, 40)
    const whole = startSend(`motd\r\n${PROMPT}`)
    for (const text of ['seq 1 20\r\n', numbered(1, 20), PROMPT]) {
      feed(text)
      whole.feed(text)
    }
    const result = send.settle()
    // 10 bytes: `seq 1 20`, a newline and `1`; `\n2` would not fit. The viewport's 40 bytes start at `9`.
    expect(result).toEqual({
      viewport: `${Array.from({ length: 12 }, (_, index) => index + 9).join('\n')}\ndsh> `,
      truncated: true,
      firstLine: 10,
      head: { text: 'seq 1 20\n1', firstLine: 1, gapLines: 7, gapBytes: '2\n3\n4\n5\n6\n7\n8\n'.length },
    })
    expectAccounted(whole.send.settle().viewport, result)
  })

  it('counts UTF-8 bytes: in its bound, in the gap and in a first viewport line that lost its head', () => {
    const { send, feed } = startSend('', 40)
    const whole = startSend('')
    const output = `€€€\r\nü\r\n${'€'.repeat(20)}\r\n`
    feed(output)
    whole.feed(output)
    const result = send.settle({ currentLine: false })
    // Bound 10: `€€€` (9) fits, `\nü` (12) does not. The last line's 61 bytes keep their newest 40 (13 €).
    expect(result).toEqual({
      viewport: '€'.repeat(13),
      truncated: true,
      firstLine: 2,
      head: { text: '€€€', firstLine: 0, gapLines: 1, gapBytes: 'ü\n'.length + 1 + 7 * 3 },
    })
    expectAccounted(whole.send.settle({ currentLine: false }).viewport, result)
  })

  it('keeps no head when the first line alone is longer than its bound', () => {
    const { send, feed } = startSend(PROMPT, 40)
    feed('echo 0123456789\r\n')
    feed(numbered(1, 30))
    const result = send.settle()
    expect(result.truncated).toBe(true)
    expect(result.head).toBeUndefined()
  })

  it('renders the first line as the viewport would: after the prompt, or whole when the prompt was rewritten', () => {
    const after = startSend('dsh> ', 24)
    after.feed(`ls\r\n${numbered(1, 20)}`)
    // Bound 6: `ls`, `1` and `2` with their newlines between.
    expect(after.send.settle().head).toMatchObject({ text: 'ls\n1\n2', firstLine: 0 })
    const rewritten = startSend('old> ', 24)
    rewritten.feed(`\rnew\r\n${numbered(1, 20)}`)
    expect(rewritten.send.settle().head).toMatchObject({ text: 'new> ', firstLine: 0 })
  })

  it('holds only lines the viewport lacks when they overlap, and nothing lost when they touch', () => {
    const lines = (count: number) =>
      ['ab', 'cd', 'ef', 'gh', 'ij', 'kl', 'mn', 'op']
        .slice(0, count)
        .map((line) => `${line}\r\n`)
        .join('')
    // 24 bytes in a bound of 20: `ab` and `c` are dropped, the head (bound 5) kept `ab` and `cd`.
    const overlap = startSend('', 20)
    overlap.feed(lines(8))
    expect(overlap.send.settle({ currentLine: false })).toEqual({
      viewport: 'd\nef\ngh\nij\nkl\nmn\nop',
      truncated: true,
      firstLine: 1,
      head: { text: 'ab', firstLine: 0, gapLines: 0, gapBytes: 1 },
    })
    // 26 bytes: exactly `ab\ncd\n` is dropped, and the head has it all.
    const touching = startSend('', 20)
    touching.feed(`${lines(8)}q\r\n`)
    expect(touching.send.settle({ currentLine: false })).toEqual({
      viewport: 'ef\ngh\nij\nkl\nmn\nop\nq',
      truncated: true,
      firstLine: 2,
      head: { text: 'ab\ncd', firstLine: 0, gapLines: 0, gapBytes: 0 },
    })
    // 21 bytes: only `a` is dropped, from a line the viewport still shows; no whole line is missing.
    const cutOnly = startSend('', 20)
    cutOnly.feed(lines(7))
    expect(cutOnly.send.settle({ currentLine: false })).toEqual({ viewport: 'b\ncd\nef\ngh\nij\nkl\nmn', truncated: true, firstLine: 0 })
  })

  it('keeps no head when nothing was dropped, even when a line was clipped', () => {
    const { send, feed } = startSend(PROMPT, 100)
    feed(`seq 1 3\r\n${numbered(1, 3)}${PROMPT}`)
    expect(send.settle()).toEqual({ viewport: 'seq 1 3\n1\n2\n3\ndsh> ', truncated: false, firstLine: 0 })
    const clipped = startSend('', 100, 4)
    clipped.feed('abcdefgh\r\nok\r\n')
    expect(clipped.send.settle()).toEqual({ viewport: 'efgh\nok\n', truncated: true, firstLine: 0 })
  })

  it('keeps no head once a read took a delta; a read that took nothing changes nothing', () => {
    const read = startSend(PROMPT, 20)
    read.feed('make\r\n')
    expect(read.send.readOutput().delta).toBe('make\n')
    read.feed(numbered(1, 30))
    const afterRead = read.send.settle()
    expect(afterRead.truncated).toBe(true)
    expect(afterRead.head).toBeUndefined()
    const early = startSend(PROMPT, 20)
    expect(early.send.readOutput()).toEqual({ delta: '', truncated: false })
    early.feed(`make\r\n${numbered(1, 30)}`)
    // The viewport keeps `4\n25\n…\n30\n`: `1` … `23` and the `2` of `24` are lost (18 + 42 + 1 bytes).
    expect(early.send.settle().head).toEqual({ text: 'make', firstLine: 0, gapLines: 23, gapBytes: 61 })
  })

  it('leaves its firstLine out after a chunk it never saw', () => {
    const { sanitizer, send, feed } = startSend('', 20)
    feed('a\r\n')
    sanitizer.write(utf8('unseen\r\n'))
    feed(numbered(1, 30))
    // Bound 5: `a`, `1`, `2`. The viewport keeps `4\n25\n…\n30\n`: `3` … `23` and a `2` are lost.
    expect(send.settle().head).toEqual({ text: 'a\n1\n2', gapLines: 21, gapBytes: 7 * 2 + 14 * 3 + 1 })
  })

  it('holds the first whole lines that fit, and every line is in the head, the gap or the viewport once', () => {
    const piece = fc.constantFrom('a', 'é', '😀', 'xyz', '\r\n', '\n', '\r', '\r\n\r\n', 'progress 10%\r', '\x1b[K', '\b', '0123456789', 'ab\r\n')
    const text = fc.array(piece, { maxLength: 12 }).map((pieces) => pieces.join(''))
    // Reads are rare: most runs are of sends nobody read, the only ones with a head.
    const readNow = fc.integer({ min: 0, max: 7 }).map((roll) => roll === 0)
    fc.assert(
      fc.property(
        text,
        fc.array(fc.tuple(text, readNow), { maxLength: 12 }),
        fc.integer({ min: 1, max: 48 }),
        fc.option(fc.integer({ min: 1, max: 8 }), { nil: undefined }),
        fc.boolean(),
        (before, steps, maxBytes, maxLineLength, currentLine) => {
          const sanitizer = new TerminalSanitizer(maxLineLength === undefined ? {} : { maxLineLength })
          sanitizer.write(utf8(before))
          const start = sanitizer.line.number
          const send = new SendOutputBuffer(sanitizer.line, maxBytes)
          // The same output without a bound is the reference transcript.
          const reference = new SendOutputBuffer(sanitizer.line, 1 << 20)
          let read = false
          for (const [chunk, readNow] of steps) {
            const sanitized = sanitizer.write(utf8(chunk))
            send.append(sanitized)
            reference.append(sanitized)
            if (!readNow) continue
            const { delta, truncated } = send.readOutput()
            read ||= delta !== '' || truncated
          }
          const result = send.settle({ currentLine })
          if (read) {
            expect(result.head).toBeUndefined()
            return
          }
          const whole = reference.settle({ currentLine }).viewport
          const lines = whole.split('\n')
          // Whole lines dropped in front of the viewport, and the head its bound allows of the completed lines.
          const dropped = lines.length - result.viewport.split('\n').length
          const completed = currentLine ? lines.length - 1 : lines.length
          const bound = Math.floor(maxBytes / 4)
          let fitting = 0
          let bytes = -1
          while (fitting < completed && bytes + 1 + Buffer.byteLength(lines[fitting] as string) <= bound) {
            bytes += 1 + Buffer.byteLength(lines[fitting] as string)
            fitting += 1
          }
          const kept = Math.min(fitting, dropped)
          if (kept === 0) {
            expect(result.head).toBeUndefined()
            return
          }
          const headText = lines.slice(0, kept).join('\n')
          expect(result.head).toEqual({
            text: headText,
            firstLine: start,
            gapLines: dropped - kept,
            gapBytes: Buffer.byteLength(whole) - Buffer.byteLength(headText) - 1 - Buffer.byteLength(result.viewport),
          })
          expectAccounted(whole, result)
          if (result.firstLine !== undefined) expect(result.firstLine).toBe(start + dropped)
        },
      ),
      { numRuns: 2000 },
    )
  })
})
