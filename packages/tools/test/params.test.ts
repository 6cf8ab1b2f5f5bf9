import { MAX_LINE_PATTERN_LENGTH } from 'dsh-basics'
import { describe, expect, it } from 'vitest'
import { regexSourceParam } from '../src/index'

// The shared pattern parameter: what it accepts and how a refusal names the pattern. Compiling is
// `LinePattern.compile`'s (dsh-basics); this parameter refuses only what is no regular expression.
describe('regexSourceParam', () => {
  it('accepts a source that compiles, inline flags included', () => {
    expect(regexSourceParam('waitFor').parse('ready|listening on \\d+')).toBe('ready|listening on \\d+')
    expect(regexSourceParam('waitFor').parse('(?i)ready')).toBe('(?i)ready')
  })

  it('refuses an empty pattern, a too long one and one that does not compile, naming the key and the pattern', () => {
    const empty = regexSourceParam('waitFor').safeParse('')
    expect(empty.success).toBe(false)
    expect(empty.error?.issues[0]?.message).toMatch(/^waitFor must not be empty/)
    const broken = regexSourceParam('waitFor').safeParse('(unclosed')
    expect(broken.error?.issues.map((issue) => issue.message)).toEqual([
      'waitFor "(unclosed" is not a valid regular expression (missing closing ): "(unclosed")',
    ])
    const long = regexSourceParam('waitFor').safeParse('a'.repeat(MAX_LINE_PATTERN_LENGTH + 1))
    expect(long.error?.issues.map((issue) => issue.message)).toEqual([`waitFor must be at most ${MAX_LINE_PATTERN_LENGTH} characters long`])
  })

  it('passes JavaScript-only syntax on to the tool, which refuses it as UNSUPPORTED_PATTERN when it compiles it', () => {
    for (const source of ['(a)\\1', 'x(?=y)', '(?<=x)y', '.{0,300}x']) expect(regexSourceParam('waitFor').safeParse(source).success).toBe(true)
  })

  it('echoes at most 100 bytes of a long pattern', () => {
    const message = regexSourceParam('waitFor').safeParse(`(${'x'.repeat(2000)}`).error?.issues[0]?.message ?? ''
    expect(message).toMatch(/^waitFor "\(x{99}" is not a valid regular expression/)
    expect(Buffer.byteLength(message)).toBeLessThan(300)
  })
})
