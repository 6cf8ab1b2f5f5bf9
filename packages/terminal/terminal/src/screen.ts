/** A terminal's window size in character cells. */
export interface TerminalSize {
  /** Height in rows (1 … {@link MAX_TERMINAL_ROWS}). */
  readonly rows: number
  /** Width in columns (1 … {@link MAX_TERMINAL_COLS}). */
  readonly cols: number
}

/** Largest height a session may ask for: larger screens only cost memory and tokens. */
export const MAX_TERMINAL_ROWS = 500

/** Largest width a session may ask for. */
export const MAX_TERMINAL_COLS = 1000

/**
 * What the terminal shows now, as a screen (not a history of lines): what a full-screen program
 * (vim, less, top, a curses menu) drew, rendered by the session's terminal emulator.
 */
export interface TerminalScreen {
  /** The visible rows, top first, trailing blanks trimmed; blank rows at the bottom are left out. */
  readonly lines: readonly string[]
  /** The window size the program draws for. */
  readonly size: TerminalSize
  /** The cursor, 1-based (row 1 is the top row, column 1 the leftmost). */
  readonly cursor: { readonly row: number; readonly col: number }
  /** A full-screen program switched to the alternate screen and has not switched back. */
  readonly alternateScreen: boolean
  /** The window title a program set (OSC 0/2), when it set a non-empty one. */
  readonly title?: string
}

/** How a read renders the session: its line history (default) or the screen as it is now. */
export const TERMINAL_READ_VIEWS = ['lines', 'screen'] as const

/** One of {@link TERMINAL_READ_VIEWS}. */
export type TerminalReadView = (typeof TERMINAL_READ_VIEWS)[number]

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
