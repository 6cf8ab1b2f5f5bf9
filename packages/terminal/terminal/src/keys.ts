/**
 * Keys a send can press by name (besides any single character, which presses itself). `C-<key>` and
 * `M-<key>` (Ctrl and Alt/Meta) combine with a single character or, for `M-`, a named key.
 */
export const TERMINAL_KEY_NAMES = [
  'Enter',
  'Tab',
  'S-Tab',
  'Escape',
  'Backspace',
  'Delete',
  'Insert',
  'Up',
  'Down',
  'Left',
  'Right',
  'Home',
  'End',
  'PageUp',
  'PageDown',
  'Space',
  'F1',
  'F2',
  'F3',
  'F4',
  'F5',
  'F6',
  'F7',
  'F8',
  'F9',
  'F10',
  'F11',
  'F12',
] as const

/** One of {@link TERMINAL_KEY_NAMES}. */
export type TerminalKeyName = (typeof TERMINAL_KEY_NAMES)[number]

/** Most keys one send may press: a longer list is a text to type, not keys to press. */
export const MAX_TERMINAL_KEYS = 256

/**
 * Why a key name is not one a send can press, or undefined when it is: a {@link TERMINAL_KEY_NAMES}
 * entry, one character (one code point, not a control character), or `C-`/`M-` with one of those
 * (`C-` takes a letter or one of `@[\]^_? ` only, as a terminal can send no other).
 */
export function keyNameProblem(key: string): string | undefined {
  if ((TERMINAL_KEY_NAMES as readonly string[]).includes(key)) return undefined
  if (isPlainCharacter(key)) return undefined
  if (key.startsWith('C-') && key.length > 2) {
    const rest = key.slice(2)
    return isPlainCharacter(rest) && /^[A-Za-z@[\\\]^_? ]$/.test(rest)
      ? undefined
      : `C-${rest} has no control code (C- takes a letter or one of @[\\]^_? and space)`
  }
  if (key.startsWith('M-') && key.length > 2) {
    const rest = key.slice(2)
    if (rest.startsWith('M-')) return `${key} repeats M-`
    return keyNameProblem(rest) === undefined ? undefined : `${key}: ${rest} is not a key`
  }
  return `unknown key ${JSON.stringify(key)}`
}

/** One code point that prints: not a control character (those have names, e.g. Enter, or C-<key>). */
function isPlainCharacter(text: string): boolean {
  const codePoint = text.codePointAt(0)
  if (codePoint === undefined || String.fromCodePoint(codePoint) !== text) return false
  return codePoint >= 0x20 && codePoint !== 0x7f && !(codePoint >= 0x80 && codePoint < 0xa0)
}
