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
    const found = new OutputMatcher(/ready/, 0).test(chunk as SanitizedChunk)
    expect(found?.match).toEqual({ text: 'ready', line: 'ready two' })
    expect(found?.head.lines).toEqual(['one', 'ready two'])
    expect(found?.rest?.lines).toEqual(['three'])
    expect(found?.rest?.firstLine).toBe(2)
    expect(found?.rest?.line.text()).toBe('four')
  })

  it('never matches lines before its first line (the echo of the input)', () => {
    const [chunk] = chunks('dsh> echo ready\nready\n')
    const found = new OutputMatcher(/ready/, 1).test(chunk as SanitizedChunk)
    expect(found?.match.line).toBe('ready')
    expect(found?.head.lines).toEqual(['dsh> echo ready', 'ready'])
    expect(new OutputMatcher(/ready/, 2).test(chunk as SanitizedChunk)).toBeUndefined()
  })

  it('matches the line the cursor is on, as it stands, with the whole chunk as head', () => {
    // The current line is live: test each chunk as it arrives.
    const sanitizer = new TerminalSanitizer()
    const matcher = new OutputMatcher(/ready\?/, 0)
    expect(matcher.test(sanitizer.write(Buffer.from('loading')))).toBeUndefined()
    const found = matcher.test(sanitizer.write(Buffer.from('... ready?')))
    expect(found?.match).toEqual({ text: 'ready?', line: 'loading... ready?' })
    expect(found?.rest).toBeUndefined()
  })

  it('drops g and y so that no lastIndex carries between lines', () => {
    const matcher = new OutputMatcher(/ping/gy, 0)
    for (const chunk of chunks('ping\n', 'ping\n')) expect(matcher.test(chunk as SanitizedChunk)?.match.text).toBe('ping')
  })
})
