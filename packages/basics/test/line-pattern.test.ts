import { describe, expect, it } from 'vitest'
import { LINE_PATTERN_WINDOW, LinePattern, LinePatternError, MAX_LINE_PATTERN_LENGTH, MAX_LINE_PATTERN_PROGRAM } from '../src/index'

// The compile rule of model-given line patterns, and what one test of a line sees.

/** The refusal `compile` throws for `source`, as plain values; `undefined` when it compiles. */
function refusal(source: string): { code: string; message: string } | undefined {
  try {
    LinePattern.compile(source, 'waitFor')
    return undefined
  } catch (error) {
    expect(error).toBeInstanceOf(LinePatternError)
    const { code, message } = error as LinePatternError
    return { code, message }
  }
}

describe('LinePattern.compile', () => {
  it('takes the syntax a wait needs, and inline flags: (?i) ignores case', () => {
    const accepted = [
      'ready|listening on',
      '^Serving HTTP on \\S+ port (\\d+)',
      'Tests:\\s+\\d+ passed',
      '(?<port>\\d+)$',
      '\\bok\\b',
      '[^\\]]+',
      'a{2,5}?',
      '(?i)ready',
      'x(?i:ready)',
    ]
    expect(accepted.map(refusal)).toEqual(accepted.map(() => undefined))
    const ignoringCase = LinePattern.compile('(?i)server (is )?ready')
    expect(['SERVER IS READY', 'Server ready.', 'server starting'].map((line) => ignoringCase.firstMatch(line))).toEqual([
      'SERVER IS READY',
      'Server ready',
      undefined,
    ])
    expect(LinePattern.compile('x(?i:ready)').firstMatch('xREADY XREADY')).toBe('xREADY')
  })

  it('refuses backtracking-only syntax as UNSUPPORTED_PATTERN, naming the construct and what to write instead', () => {
    const cases: [string, string][] = [
      [
        '(ab)\\1',
        'waitFor "(ab)\\\\1" uses a backreference (\\1), which the linear-time matcher does not take; write the repeated text out again, e.g. "(ab)ab" instead of "(ab)\\1"',
      ],
      [
        '(?<x>ab)\\k<x>',
        'waitFor "(?<x>ab)\\\\k<x>" uses a named backreference (\\k<name>), which the linear-time matcher does not take; write the repeated text out again, e.g. "(?<x>ab)ab" instead of "(?<x>ab)\\k<x>"',
      ],
      [
        'x(?=y)',
        'waitFor "x(?=y)" uses a lookahead ((?=…) or (?!…)), which the linear-time matcher does not take; match the text itself: a line is tested whole, so "(?=.*a)(?=.*b)" becomes "a.*b|b.*a", and "x(?=y)" becomes "xy"',
      ],
      ['x(?!y)', 'waitFor "x(?!y)" uses a lookahead'],
      [
        '(?<=port )\\d+',
        'waitFor "(?<=port )\\\\d+" uses a lookbehind ((?<=…) or (?<!…)), which the linear-time matcher does not take; include the text before it in the pattern, e.g. "port \\d+" instead of "(?<=port )\\d+"',
      ],
      ['(?<!no )ready', 'waitFor "(?<!no )ready" uses a lookbehind'],
      ['\\u2713', 'waitFor "\\\\u2713" uses a \\u escape, which the linear-time matcher does not take; write \\x{2713} for \\u2713'],
      ['\\cA', 'waitFor "\\\\cA" uses a control escape (\\cA), which the linear-time matcher does not take; write \\x01 for \\cA'],
      ['[^]', 'waitFor "[^]" uses [^] (any character), which the linear-time matcher does not take; write [\\s\\S] for any character'],
      ['a{1001}', 'waitFor "a{1001}" uses a repeat count above 1000'],
      ['(a{100}){100}', 'waitFor "(a{100}){100}" uses a repeat count above 1000'],
      [
        '\\e',
        'waitFor "\\\\e" uses syntax the linear-time matcher does not take (invalid escape sequence: "\\\\e"); write it in RE2 syntax: no backreferences or lookaround',
      ],
    ]
    for (const [source, message] of cases) {
      const refused = refusal(source)
      expect({ source, code: refused?.code }).toEqual({ source, code: 'UNSUPPORTED_PATTERN' })
      expect(refused?.message.startsWith(message)).toBe(true)
    }
  })

  it(`refuses a pattern whose program is larger than ${MAX_LINE_PATTERN_PROGRAM} as UNSUPPORTED_PATTERN`, () => {
    expect(refusal('.{0,300}x')).toEqual({
      code: 'UNSUPPORTED_PATTERN',
      message:
        'waitFor ".{0,300}x" is too large for the linear-time matcher (program size 603, at most 400); ' +
        'use .* or + instead of long counted repeats such as .{0,300}, or a shorter pattern',
    })
    expect(refusal('.*x')).toBeUndefined()
  })

  it('refuses what is no regular expression, and a too long one, as INVALID_PATTERN', () => {
    expect(refusal('ready(')).toEqual({ code: 'INVALID_PATTERN', message: 'waitFor "ready(" is not a valid regular expression (missing closing ): "ready(")' })
    expect(refusal('x**')).toEqual({
      code: 'INVALID_PATTERN',
      message: 'waitFor "x**" is not a valid regular expression (invalid nested repetition operator: "**")',
    })
    expect(refusal('a'.repeat(MAX_LINE_PATTERN_LENGTH + 1))).toEqual({
      code: 'INVALID_PATTERN',
      message: `waitFor must be at most ${MAX_LINE_PATTERN_LENGTH} characters long`,
    })
    expect(refusal('a'.repeat(MAX_LINE_PATTERN_LENGTH - 4))?.code).toBe('UNSUPPORTED_PATTERN') // within the length, above the program size
    // A long refused pattern is echoed by its first 100 bytes only.
    const long = refusal(`${'b'.repeat(300)}(`)
    expect(long?.message).toMatch(/^waitFor "b{100}" is not a valid regular expression \(missing closing \): "b{40}"\)$/)
  })
})

describe('LinePattern.firstMatch', () => {
  it('answers (a+)+$ against 100 000 a and a b, which backtracks catastrophically as a RegExp', () => {
    const attack = LinePattern.compile('(a+)+$')
    expect(attack.firstMatch(`${'a'.repeat(100_000)}b`)).toBeUndefined()
    expect(attack.firstMatch(`${'a'.repeat(29)}b`)).toBeUndefined()
    expect(attack.firstMatch('b'.concat('a'.repeat(100_000)))?.length).toBe(LINE_PATTERN_WINDOW)
  })

  it('gives the leftmost match, an empty one as "", and keeps no state between lines', () => {
    const pattern = LinePattern.compile('port (\\d+)')
    expect(pattern.firstMatch('port 80, port 8080')).toBe('port 80')
    expect(pattern.firstMatch('port 80, port 8080')).toBe('port 80')
    expect(LinePattern.compile('x*').firstMatch('abc')).toBe('')
    expect(pattern.toString()).toBe('port (\\d+)')
  })

  it(`tests a long line on its last ${LINE_PATTERN_WINDOW} characters, judging ^ and \\b against the character before them`, () => {
    const filler = 'x'.repeat(LINE_PATTERN_WINDOW)
    const ready = LinePattern.compile('ready')
    expect(ready.firstMatch(`ready ${filler}`)).toBeUndefined()
    expect(ready.firstMatch(`${filler}ready ${filler.slice(6)}`)).toBe('ready')
    // A match that starts before the window is not seen, even when it ends inside it.
    expect(ready.firstMatch(`${filler}rea${'dy'}${filler.slice(2)}`)).toBeUndefined()
    // The window starts with `ready`, but the line does not: ^ does not match there, nor \b after an x.
    expect(LinePattern.compile('^ready').firstMatch(`x${'ready'.padEnd(LINE_PATTERN_WINDOW, '.')}`)).toBeUndefined()
    expect(LinePattern.compile('\\bready').firstMatch(`x${'ready'.padEnd(LINE_PATTERN_WINDOW, '.')}`)).toBeUndefined()
    expect(LinePattern.compile('^ready').firstMatch('ready'.padEnd(LINE_PATTERN_WINDOW, '.'))).toBe('ready')
    // $ is the line's end.
    expect(LinePattern.compile('ready$').firstMatch(`${filler}ready`)).toBe('ready')
  })

  it('never starts the window inside a surrogate pair', () => {
    // The window would start on the low half of 😀: it starts after the pair instead.
    const line = `😀${'x'.repeat(LINE_PATTERN_WINDOW - 1)}`
    expect(LinePattern.compile('^.|[^x]').firstMatch(line)).toBeUndefined()
    expect(LinePattern.compile('x+').firstMatch(line)?.length).toBe(LINE_PATTERN_WINDOW - 1)
    // Within the window a pair is one character.
    expect(LinePattern.compile('.$').firstMatch(`${'x'.repeat(LINE_PATTERN_WINDOW)}😀`)).toBe('😀')
  })
})
