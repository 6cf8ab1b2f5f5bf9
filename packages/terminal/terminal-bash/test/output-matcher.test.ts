import { LINE_PATTERN_WINDOW, LinePattern } from 'dsh-basics'
import { describe, expect, it } from 'vitest'
import { type SanitizedChunk, TerminalSanitizer } from '../src/output'
import { OutputMatcher } from '../src/readiness/output-matcher'

// The matcher over sanitized chunks: line by line, the echo excluded, the chunk cut after the match.
function chunks(...parts: string[]) {
  const sanitizer = new TerminalSanitizer()
  return parts.map((part) => sanitizer.write(Buffer.from(part)))
}

describe('OutputMatcher', () => {
  it('cuts a chunk after the matching line: the head ends there, the rest keeps the following lines', () => {
    const [chunk] = chunks('one\nready two\nthree\nfour')
    const found = new OutputMatcher(LinePattern.compile('ready'), 0).test(chunk as SanitizedChunk)
    expect(found?.match).toEqual({ text: 'ready', line: 'ready two' })
    expect(found?.head.lines).toEqual(['one', 'ready two'])
    expect(found?.rest?.lines).toEqual(['three'])
    expect(found?.rest?.firstLine).toBe(2)
    expect(found?.rest?.line.text()).toBe('four')
  })

  it('never matches lines before its first line (the echo of the input)', () => {
    const [chunk] = chunks('dsh> echo ready\nready\n')
    const found = new OutputMatcher(LinePattern.compile('ready'), 1).test(chunk as SanitizedChunk)
    expect(found?.match.line).toBe('ready')
    expect(found?.head.lines).toEqual(['dsh> echo ready', 'ready'])
    expect(new OutputMatcher(LinePattern.compile('ready'), 2).test(chunk as SanitizedChunk)).toBeUndefined()
  })

  it('matches the line the cursor is on, as it stands, with the whole chunk as head', () => {
    // The current line is live: test each chunk as it arrives.
    const sanitizer = new TerminalSanitizer()
    const matcher = new OutputMatcher(LinePattern.compile('ready\\?'), 0)
    expect(matcher.test(sanitizer.write(Buffer.from('loading')))).toBeUndefined()
    const found = matcher.test(sanitizer.write(Buffer.from('... ready?')))
    expect(found?.match).toEqual({ text: 'ready?', line: 'loading... ready?' })
    expect(found?.rest).toBeUndefined()
  })

  it('tests (a+)+$ against 100 000 a and a b in linear time, and a long line on its last LINE_PATTERN_WINDOW characters', () => {
    const attack = new OutputMatcher(LinePattern.compile('(a+)+$'), 0)
    const [completed, current] = chunks(`${'a'.repeat(100_000)}b\n`, `${'a'.repeat(100_000)}b`)
    expect([attack.test(completed as SanitizedChunk), attack.test(current as SanitizedChunk)]).toEqual([undefined, undefined])
    // `ready` at the head of a line longer than the window is not seen; at its tail it is.
    const ready = new OutputMatcher(LinePattern.compile('ready'), 0)
    const [head, tail] = chunks(`ready ${'x'.repeat(LINE_PATTERN_WINDOW)}\n`, `${'x'.repeat(LINE_PATTERN_WINDOW)} ready\n`)
    expect(ready.test(head as SanitizedChunk)).toBeUndefined()
    expect(ready.test(tail as SanitizedChunk)?.match.text).toBe('ready')
  })
})
