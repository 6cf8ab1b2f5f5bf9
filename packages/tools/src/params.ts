import { z } from 'zod'
import { LinePattern, LinePatternError, MAX_LINE_PATTERN_LENGTH } from 'dsh-basics'

/**
 * A parameter that holds a line pattern's source (RE2 syntax, see `LinePattern` in dsh-basics; no
 * slashes, inline flags such as `(?i)`). An empty one (it would match anything), a longer one than
 * `MAX_LINE_PATTERN_LENGTH` and one that is no regular expression fail validation, so the caller
 * gets INVALID_ARGUMENTS naming `key` and the pattern (its first 100 bytes). JavaScript-only syntax
 * (backreferences, lookaround) passes here: the tool compiles the pattern with `LinePattern.compile`,
 * which refuses it as UNSUPPORTED_PATTERN with what to write instead.
 */
export function regexSourceParam(key: string) {
  return z
    .string()
    .min(1, `${key} must not be empty: it would match the first line of output`)
    .max(MAX_LINE_PATTERN_LENGTH, `${key} must be at most ${MAX_LINE_PATTERN_LENGTH} characters long`)
    .superRefine((pattern, issues) => {
      if (pattern.length > MAX_LINE_PATTERN_LENGTH) return
      try {
        LinePattern.compile(pattern, key)
      } catch (error) {
        if (error instanceof LinePatternError && error.code === 'INVALID_PATTERN') issues.addIssue({ code: 'custom', message: error.message })
      }
    })
}
