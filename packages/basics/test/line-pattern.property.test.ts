import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { LINE_PATTERN_WINDOW, LinePattern, LinePatternError } from '../src/index'

// Properties of the compile rule: on the syntax JavaScript and RE2 share, a LinePattern finds what
// a RegExp finds on short lines (the switch of engine changes no wait that used to work), and a
// line longer than the window is judged on its tail alone.

/** Characters of the generated lines: letters, a digit, a space and punctuation the patterns name. */
const LINE_CHARACTERS = ['a', 'b', 'c', 'A', '1', ' ', '-', '.']

/** Atoms whose meaning is the same in both engines on {@link LINE_CHARACTERS}. */
const ATOMS = ['a', 'b', 'c', 'A', '1', ' ', '\\-', '\\.', '.', '[ab]', '[^a ]', '[a-c1]', '\\d', '\\D', '\\w', '\\W', '\\s', '\\S']

/** Anchors and boundaries, also the same in both engines. */
const ASSERTIONS = ['^', '$', '\\b', '\\B']

/** Repeat operators, greedy and lazy, with small counts; the first six may repeat nothing. */
const REPEATS = ['*', '?', '*?', '??', '{0,2}?', '{0,1}', '+', '+?', '{2}', '{1,3}', '{2,}']

/** Whether a repeat operator lets its operand match no text. */
function repeatsNothing(repeat: string): boolean {
  return REPEATS.indexOf(repeat) < 6
}

/** A generated pattern and whether it can match the empty text. */
interface Generated {
  readonly source: string
  readonly nullable: boolean
}

/**
 * Pattern sources in the syntax both engines share: atoms, assertions, concatenation, alternation,
 * groups, repeats. A group that can match the empty text is never repeated: how often an empty
 * iteration counts is where backtracking engines and RE2 differ (`(a*?)*` on `a`), a difference no
 * wait for a line depends on.
 */
const sharedSyntax: fc.Arbitrary<string> = fc
  .letrec<{ pattern: Generated; term: Generated }>((tie) => ({
    term: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.constantFrom(...ATOMS).map((source) => ({ source, nullable: false })),
      fc.constantFrom(...ASSERTIONS).map((source) => ({ source, nullable: true })),
      fc.tuple(fc.constantFrom(...ATOMS), fc.constantFrom(...REPEATS)).map(([atom, repeat]) => ({ source: atom + repeat, nullable: repeatsNothing(repeat) })),
      fc.tuple(fc.constantFrom('(', '(?:'), tie('pattern'), fc.constantFrom('', ...REPEATS)).map(([open, inner, repeat]) => {
        const kept = inner.nullable ? '' : repeat
        return { source: `${open}${inner.source})${kept}`, nullable: inner.nullable || (kept !== '' && repeatsNothing(kept)) }
      }),
    ),
    pattern: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.array(tie('term'), { minLength: 1, maxLength: 4 }).map((terms) => ({
        source: terms.map((term) => term.source).join(''),
        nullable: terms.every((term) => term.nullable),
      })),
      fc.tuple(tie('term'), tie('term')).map(([left, right]) => ({ source: `${left.source}|${right.source}`, nullable: left.nullable || right.nullable })),
    ),
  }))
  .pattern.map((generated) => generated.source)

/**
 * The pattern compiled, or a skipped run when nested counted repeats take its program past the size
 * bound (`((a{1,3}){0,2}a){1,3}`): that refusal is a rule of its own, tested with the other refusals.
 */
function compileWithinSize(source: string): LinePattern {
  try {
    return LinePattern.compile(source)
  } catch (error) {
    fc.pre(!(error instanceof LinePatternError && /too large for the linear-time matcher/.test(error.message)))
    throw error
  }
}

/** Short lines over {@link LINE_CHARACTERS}: short enough that a RegExp cannot backtrack for long. */
const lines = fc.array(fc.constantFrom(...LINE_CHARACTERS), { maxLength: 16 }).map((characters) => characters.join(''))

describe('LinePattern against RegExp', () => {
  it('finds the same leftmost match as a RegExp on the syntax both take', () => {
    fc.assert(
      fc.property(sharedSyntax, lines, (source, line) => {
        const pattern = compileWithinSize(source)
        expect(pattern.firstMatch(line)).toBe(new RegExp(source).exec(line)?.[0])
      }),
      { numRuns: 2000 },
    )
  })

  it('also with (?i), as a RegExp with the i flag', () => {
    fc.assert(
      fc.property(sharedSyntax, lines, (source, line) => {
        expect(compileWithinSize(`(?i)${source}`).firstMatch(line)).toBe(new RegExp(source, 'i').exec(line)?.[0])
      }),
      { numRuns: 500 },
    )
  })

  it(`judges a line longer than ${LINE_PATTERN_WINDOW} characters on its tail alone, where the pattern has no ^ or \\b`, () => {
    // The oracle is the pattern on the tail cut off the line: a RegExp on 8192 characters could
    // itself backtrack for ever (the first property already ties the engine to RegExp).
    const unanchored = sharedSyntax.filter((source) => !/[\^]|\\[bB]/.test(source))
    fc.assert(
      fc.property(unanchored, lines, fc.integer({ min: 1, max: 64 }), (source, tail, extra) => {
        const line = 'c'.repeat(LINE_PATTERN_WINDOW + extra) + tail
        const pattern = compileWithinSize(source)
        expect(pattern.firstMatch(line)).toBe(pattern.firstMatch(line.slice(line.length - LINE_PATTERN_WINDOW)))
      }),
      { numRuns: 300 },
    )
  })
})
