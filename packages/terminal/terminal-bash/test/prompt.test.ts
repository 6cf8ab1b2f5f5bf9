import { describe, expect, it } from 'vitest'
import { PromptTracker, TerminalSanitizer } from '../src/output'
import { raw, utf8 } from './helpers'

/** Feed chunks and return the tracker's verdict after each one. */
function verdicts(chunks: string[], prompt = 'dsh> '): boolean[] {
  const sanitizer = new TerminalSanitizer()
  const tracker = new PromptTracker(prompt)
  return chunks.map((chunk) => tracker.update(sanitizer.write(utf8(chunk))))
}

const MARK = (status: number) => `\x1b]133;D;${status}\x07`

describe('PromptTracker', () => {
  it('is ready when the marker is followed by exactly the prompt, and reports the exit status', () => {
    const sanitizer = new TerminalSanitizer()
    const tracker = new PromptTracker('dsh> ')
    expect(tracker.ready).toBe(false)
    expect(tracker.exitStatus).toBeUndefined()
    expect(tracker.update(sanitizer.write(raw(`false\r\n${MARK(1)}dsh> `)))).toBe(true)
    expect(tracker.exitStatus).toBe(1)
    expect(tracker.marker).toEqual({ line: 1, column: 0, kind: 'prompt', status: 1 })
  })

  it('carries the tail across chunks: marker and prompt may arrive separately', () => {
    expect(verdicts(['out\r\n', MARK(0), 'ds', 'h>', ' '])).toEqual([false, false, false, false, true])
    expect(verdicts(['\x1b]133;', 'D;0', '\x07dsh> '])).toEqual([false, false, true])
  })

  it('is not ready on the prompt text without a marker', () => {
    expect(verdicts(['dsh> ', 'echo dsh> \r\ndsh> '])).toEqual([false, false])
  })

  it('disqualifies a prompt followed by echo or output', () => {
    expect(verdicts([`${MARK(0)}dsh> `, 'e'])).toEqual([true, false])
    expect(verdicts([`${MARK(0)}dsh> echo hi`])).toEqual([false])
    expect(verdicts([`${MARK(0)}dsh> `, '\r\n'])).toEqual([true, false])
    expect(verdicts([`${MARK(0)}dsh> \r\nhi\r\n`])).toEqual([false])
  })

  it('rejects a delayed earlier prompt once input follows it, in any chunking', () => {
    const transcript = `${MARK(0)}dsh> echo hi\r\nhi\r\n`
    for (let cut = 0; cut <= transcript.length; cut++) {
      const steps = verdicts([transcript.slice(0, cut), transcript.slice(cut)])
      expect(steps[1]).toBe(false)
    }
  })

  it('accepts output before the marker on the same line (a command without a trailing newline)', () => {
    expect(verdicts([`abc${MARK(0)}dsh> `])).toEqual([true])
  })

  it('uses the latest marker', () => {
    expect(verdicts([`${MARK(0)}dsh> ${MARK(3)}`])).toEqual([false])
    const sanitizer = new TerminalSanitizer()
    const tracker = new PromptTracker('dsh> ')
    tracker.update(sanitizer.write(raw(`${MARK(0)}dsh> x\r\n${MARK(2)}dsh> `)))
    expect(tracker.ready).toBe(true)
    expect(tracker.exitStatus).toBe(2)
  })

  it('requires the cursor after the prompt', () => {
    expect(verdicts([`${MARK(0)}dsh> `, '\r'])).toEqual([true, false])
    expect(verdicts([`${MARK(0)}dsh> \x1b[3G`])).toEqual([false])
  })

  it('judges the rendered line: input typed and erased again leaves the bare prompt', () => {
    expect(verdicts([`${MARK(0)}dsh> `, 'x', '\b \b'])).toEqual([true, false, true])
  })

  it('forgets the marker on reset, so only a later marker counts', () => {
    const sanitizer = new TerminalSanitizer()
    const tracker = new PromptTracker('dsh> ')
    tracker.update(sanitizer.write(raw(`${MARK(0)}dsh> `)))
    tracker.reset()
    expect(tracker.ready).toBe(false)
    expect(tracker.marker).toBeUndefined()
    expect(tracker.update(sanitizer.write(raw('')))).toBe(false)
    expect(tracker.update(sanitizer.write(raw(`ls\r\n${MARK(0)}dsh> `)))).toBe(true)
  })

  it('works with a multibyte prompt split inside a character', () => {
    const sanitizer = new TerminalSanitizer()
    const tracker = new PromptTracker('❯ ')
    const bytes = utf8(`${MARK(0)}❯ `)
    expect(tracker.update(sanitizer.write(bytes.subarray(0, bytes.length - 2)))).toBe(false)
    expect(tracker.update(sanitizer.write(bytes.subarray(bytes.length - 2)))).toBe(true)
  })

  it('reads a real bash transcript (TERM=dumb, readline erase echo) the same way', () => {
    const transcript = `${MARK(0)}dsh> ab\b \b\b \bcat\r\nx\b \by\r\ny\r\n${MARK(0)}dsh> `
    expect(verdicts([transcript])).toEqual([true])
    expect(verdicts([transcript.slice(0, -3), transcript.slice(-3)])).toEqual([false, true])
  })

  it('refuses an empty prompt', () => {
    expect(() => new PromptTracker('')).toThrow(RangeError)
  })
})
