import { describe, expect, it } from 'vitest'
import { regexSourceParam } from '../src/index'

// The shared regular-expression parameter: what it accepts and how a refusal names the pattern.
describe('regexSourceParam', () => {
  it('accepts a source that compiles', () => {
    expect(regexSourceParam('waitFor').parse('ready|listening on \\d+')).toBe('ready|listening on \\d+')
  })

  it('refuses an empty pattern and one that does not compile, naming the key and the pattern', () => {
    const empty = regexSourceParam('waitFor').safeParse('')
    expect(empty.success).toBe(false)
    expect(empty.error?.issues[0]?.message).toMatch(/^waitFor must not be empty/)
    const broken = regexSourceParam('waitFor').safeParse('(unclosed')
    expect(broken.error?.issues[0]?.message).toBe('waitFor "(unclosed" is not a valid JavaScript regular expression (Unterminated group)')
  })

  it('echoes at most 100 bytes of a long pattern', () => {
    const message = regexSourceParam('waitFor').safeParse(`(${'x'.repeat(10_000)}`).error?.issues[0]?.message ?? ''
    expect(Buffer.byteLength(message)).toBeLessThan(300)
  })
})
