import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { SendOutputBuffer, TerminalSanitizer } from '../src/output'
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
    expect(send.settle()).toEqual({ viewport: 'ls\na.txt\nb.txt\ndsh> ', truncated: false })
  })

  it('consumes through readOutput, then settles with the rest', () => {
    const { send, feed } = startSend(PROMPT)
    feed('make\r\nstep 1\r\n')
    expect(send.readOutput()).toEqual({ delta: 'make\nstep 1\n', truncated: false })
    expect(send.readOutput()).toEqual({ delta: '', truncated: false })
    feed('step 2\r\n')
    expect(send.settle()).toEqual({ viewport: 'step 2\n', truncated: false })
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
