import { z } from 'zod'
import { keepUtf8Head } from 'dsh-basics'

/** Bytes of a refused pattern echoed in its error, so a huge pattern cannot fill the result. */
const ECHOED_PATTERN_BYTES = 100

/**
 * A parameter that holds a JavaScript regular-expression source (no slashes, no flags). An empty
 * one (it would match anything) or one that does not compile fails validation, so the caller gets
 * INVALID_ARGUMENTS naming `key` and the pattern (its first 100 bytes).
 */
export function regexSourceParam(key: string) {
  return z
    .string()
    .min(1, `${key} must not be empty: it would match the first line of output`)
    .superRefine((pattern, issues) => {
      try {
        new RegExp(pattern)
      } catch (error) {
        const shown = JSON.stringify(keepUtf8Head(pattern, ECHOED_PATTERN_BYTES))
        const reason = syntaxReason((error as Error).message, pattern)
        issues.addIssue({ code: 'custom', message: `${key} ${shown} is not a valid JavaScript regular expression (${reason})` })
      }
    })
}

/**
 * What is wrong with `pattern`, without the pattern: V8 says `Invalid regular expression: /<source>/: <reason>`,
 * which would repeat a long pattern in full. Anything else is cut to the echo bound.
 */
function syntaxReason(message: string, pattern: string): string {
  const prefix = `Invalid regular expression: /${pattern}/: `
  return message.startsWith(prefix) ? message.slice(prefix.length) : keepUtf8Head(message, ECHOED_PATTERN_BYTES)
}
