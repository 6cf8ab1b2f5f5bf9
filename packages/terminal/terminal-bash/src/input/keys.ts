import { TERMINAL_KEY_NAMES, type TerminalKeyName } from 'dsh-terminal'
import type { KeyModes } from './send-input'

/** The escape character that starts every sequence below (and is the Escape key itself). */
const ESC = '\x1b'

/**
 * xterm's modifier parameter for Alt (1 + 2): what `M-` adds to a key whose sequence takes
 * parameters, as in terminfo's `kUP3=\E[1;3A` for xterm-256color.
 */
const ALT_PARAMETER = 3

/**
 * How xterm writes one named key. `bytes` never change; `cursor` keys end in `CSI <final>`, or
 * `SS3 <final>` in application cursor mode (DECCKM); `ss3` keys (F1–F4) are `SS3 <final>` in either
 * mode; `tilde` keys are `CSI <number> ~`.
 */
type NamedKeyEncoding =
  | { readonly kind: 'bytes'; readonly bytes: string }
  | { readonly kind: 'cursor'; readonly final: string }
  | { readonly kind: 'ss3'; readonly final: string }
  | { readonly kind: 'tilde'; readonly number: number }

const bytes = (text: string): NamedKeyEncoding => ({ kind: 'bytes', bytes: text })
const cursor = (final: string): NamedKeyEncoding => ({ kind: 'cursor', final })
const ss3 = (final: string): NamedKeyEncoding => ({ kind: 'ss3', final })
const tilde = (number: number): NamedKeyEncoding => ({ kind: 'tilde', number })

/** Every name of the vocabulary with what xterm sends for it (checked against tmux 3.3a and terminfo). */
const NAMED_KEYS: Readonly<Record<TerminalKeyName, NamedKeyEncoding>> = {
  Enter: bytes('\r'),
  Tab: bytes('\t'),
  'S-Tab': bytes(`${ESC}[Z`),
  Escape: bytes(ESC),
  Backspace: bytes('\x7f'),
  Space: bytes(' '),
  Insert: tilde(2),
  Delete: tilde(3),
  PageUp: tilde(5),
  PageDown: tilde(6),
  Up: cursor('A'),
  Down: cursor('B'),
  Right: cursor('C'),
  Left: cursor('D'),
  Home: cursor('H'),
  End: cursor('F'),
  F1: ss3('P'),
  F2: ss3('Q'),
  F3: ss3('R'),
  F4: ss3('S'),
  F5: tilde(15),
  F6: tilde(17),
  F7: tilde(18),
  F8: tilde(19),
  F9: tilde(20),
  F10: tilde(21),
  F11: tilde(23),
  F12: tilde(24),
}

/**
 * The bytes a list of keys writes, pressed in order (see {@link encodeKey}). The keys are the ones
 * the registry checked (`checkSendRequest`): the encoder does not check them again.
 */
export function encodeKeys(keys: readonly string[], modes: KeyModes): string {
  let written = ''
  for (const key of keys) written += encodeKey(key, modes)
  return written
}

/**
 * The bytes one key writes, as xterm sends them for `modes`. Only application cursor keys
 * (DECCKM) changes a name here: arrows and Home/End become `ESC O <final>`. Keypad application
 * mode (DECKPAM) changes nothing, because every name is a key of the main keyboard: the keypad's
 * own keys (digits, operators, keypad Enter as `ESC O M`) are not in the vocabulary, and xterm's
 * main Enter stays `\r`. `M-<key>` is xterm's Alt: the modifier parameter 3 on a key whose
 * sequence takes parameters (`M-Up` is `ESC [ 1 ; 3 A` in either cursor mode, `M-F5` is
 * `ESC [ 15 ; 3 ~`), else ESC before the key (`M-b` is `ESC b`, `M-C-a` is `ESC ^A`).
 */
export function encodeKey(key: string, modes: KeyModes): string {
  const named = namedKey(key)
  if (named) return encodeNamed(named, modes)
  if (key.startsWith('C-') && key.length > 2) return controlCode(key.slice(2))
  if (key.startsWith('M-') && key.length > 2) {
    const inner = key.slice(2)
    const innerNamed = namedKey(inner)
    if (innerNamed && innerNamed.kind !== 'bytes') return encodeWithAlt(innerNamed)
    return ESC + encodeKey(inner, modes)
  }
  return key
}

/** The table entry of a vocabulary name, or undefined for anything else. */
function namedKey(key: string): NamedKeyEncoding | undefined {
  return (TERMINAL_KEY_NAMES as readonly string[]).includes(key) ? NAMED_KEYS[key as TerminalKeyName] : undefined
}

/** A named key without modifiers, in the cursor mode the program set. */
function encodeNamed(encoding: NamedKeyEncoding, modes: KeyModes): string {
  switch (encoding.kind) {
    case 'bytes':
      return encoding.bytes
    case 'cursor':
      return `${ESC}${modes.applicationCursorKeys ? 'O' : '['}${encoding.final}`
    case 'ss3':
      return `${ESC}O${encoding.final}`
    case 'tilde':
      return `${ESC}[${encoding.number}~`
  }
}

/**
 * A named key whose sequence takes parameters, with Alt held: xterm moves SS3 and cursor keys to
 * `CSI 1 ; 3 <final>` (cursor mode no longer matters) and adds `; 3` to `CSI <number> ~`.
 */
function encodeWithAlt(encoding: Exclude<NamedKeyEncoding, { kind: 'bytes' }>): string {
  if (encoding.kind === 'tilde') return `${ESC}[${encoding.number};${ALT_PARAMETER}~`
  return `${ESC}[1;${ALT_PARAMETER}${encoding.final}`
}

/**
 * The control code Ctrl sends with `character` (already checked: a letter, one of `@[\]^_?`, or
 * space): the character's upper-case code with bit 0x40 flipped, so `a`/`A` is 0x01, `@` NUL,
 * `[` ESC, `\` 0x1c, `]` 0x1d, `^` 0x1e, `_` 0x1f and `?` DEL; space sends NUL like `@`.
 */
function controlCode(character: string): string {
  if (character === ' ') return '\0'
  return String.fromCharCode(character.toUpperCase().charCodeAt(0) ^ 0x40)
}
