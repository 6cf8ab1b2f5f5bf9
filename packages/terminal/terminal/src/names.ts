/** Longest accepted session name, in Unicode code points (at most 256 UTF-8 bytes). */
export const MAX_SESSION_NAME_CODE_POINTS = 64

/**
 * Characters a terminal or a log would act on instead of printing: C0 controls, DEL and C1 controls,
 * the line and paragraph separators, bidirectional formatting (embeddings, overrides, isolates, marks)
 * and unpaired surrogates (not encodable as UTF-8).
 */
const NOT_PRINTABLE = /[\p{Cc}\p{Zl}\p{Zp}\p{Bidi_Control}\p{Cs}]/u

/** Why `name` is not an acceptable session name, or undefined when it is one. */
export function sessionNameProblem(name: string): string | undefined {
  if (name.trim() === '') return 'PTY session name must be a non-empty string'
  const length = codePoints(name, MAX_SESSION_NAME_CODE_POINTS + 1)
  if (length > MAX_SESSION_NAME_CODE_POINTS) {
    return `PTY session name must be at most ${MAX_SESSION_NAME_CODE_POINTS} characters (Unicode code points); choose a shorter name`
  }
  const found = NOT_PRINTABLE.exec(name)
  if (found) {
    const char = found[0]
    const position = codePoints(name.slice(0, found.index), Number.POSITIVE_INFINITY) + 1
    return `PTY session name must be printable text: character ${position} is ${codePointLabel(char)} (${kind(char)}); use letters, digits, spaces and punctuation only`
  }
  return undefined
}

/** Code points of `text`, counting no further than `stop` (a huge name is never walked to its end). */
function codePoints(text: string, stop: number): number {
  let count = 0
  for (const _ of text) if (++count >= stop) break
  return count
}

function codePointLabel(char: string): string {
  return `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`
}

function kind(char: string): string {
  if (/\p{Cc}/u.test(char)) return 'a control character'
  if (/[\p{Zl}\p{Zp}]/u.test(char)) return 'a line or paragraph separator'
  if (/\p{Bidi_Control}/u.test(char)) return 'a bidirectional formatting character'
  return 'an unpaired surrogate'
}
