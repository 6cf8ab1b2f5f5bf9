import { RE2JS } from 're2js'
import { refusalOf, tooLarge, tooLong } from './line-pattern-refusal'

// A pattern from a model is tested against output on the host's event loop. JavaScript's RegExp
// backtracks: `(a+)+$` against 30 `a` and a `b` takes seconds, and 100 000 of them forever. This
// module is the one place such a pattern is compiled: by re2js, a port of RE2, whose matching time
// is linear in the text; the length, program size and line window below bound that time.

/** Characters (UTF-16 code units) of a pattern's source; a longer one is refused before it is compiled. */
export const MAX_LINE_PATTERN_LENGTH = 2048

/**
 * Largest compiled program (RE2's program size, about one instruction per character, class or
 * repeated copy) a pattern may have: matching costs program size × text, so this bounds it.
 */
export const MAX_LINE_PATTERN_PROGRAM = 400

/**
 * Characters (UTF-16 code units) at the end of a line that one test sees: a longer line is tested
 * on its last 8192 only (a match must end in them and start in them), with `^` and `\b` still
 * judged against the character before the window, so `^` never matches inside a long line.
 */
export const LINE_PATTERN_WINDOW = 8192

/**
 * A regular expression compiled for testing output lines in linear time. Only
 * {@link LinePattern.compile} makes one, so a consumer that takes a `LinePattern` cannot be handed
 * a backtracking RegExp. Stateless: one pattern may test any number of lines, in any order.
 */
export class LinePattern {
  readonly #engine: RE2JS

  private constructor(
    /** The source as given. */
    readonly source: string,
    engine: RE2JS,
  ) {
    this.#engine = engine
  }

  /**
   * Compile `source` (RE2 syntax: JavaScript's without backreferences and lookaround; inline flags
   * such as `(?i)`). Throws {@link LinePatternError}: `INVALID_PATTERN` for what is no regular
   * expression or is too long, `UNSUPPORTED_PATTERN` for JavaScript-only syntax or a too large
   * program. `label` names the pattern in messages (a parameter name such as `waitFor`).
   */
  static compile(source: string, label = 'pattern'): LinePattern {
    if (source.length > MAX_LINE_PATTERN_LENGTH) throw tooLong(label, MAX_LINE_PATTERN_LENGTH)
    let engine: RE2JS
    try {
      engine = RE2JS.compile(source)
    } catch (thrown) {
      throw refusalOf(source, thrown, label)
    }
    const size = engine.programSize()
    if (size > MAX_LINE_PATTERN_PROGRAM) throw tooLarge(label, source, size, MAX_LINE_PATTERN_PROGRAM)
    return new LinePattern(source, engine)
  }

  /**
   * The text of the leftmost match in `line`'s last {@link LINE_PATTERN_WINDOW} characters (`''`
   * for an empty match), or `undefined` when there is none. Costs O(window × program size).
   */
  firstMatch(line: string): string | undefined {
    const matcher = this.#engine.matcher(line)
    return matcher.find(windowStart(line)) ? (matcher.group() ?? '') : undefined
  }

  /** The source, for messages and logs. */
  toString(): string {
    return this.source
  }
}

/** Where a line's tested window starts: {@link LINE_PATTERN_WINDOW} from its end, never inside a surrogate pair. */
function windowStart(line: string): number {
  const start = line.length - LINE_PATTERN_WINDOW
  if (start <= 0) return 0
  const unit = line.charCodeAt(start)
  return unit >= 0xdc00 && unit <= 0xdfff ? start + 1 : start
}
