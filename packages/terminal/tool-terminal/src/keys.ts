import { keyNameProblem, TERMINAL_KEY_NAMES } from 'dsh-terminal'

// Key names are checked here, before a send starts, so a model learns the names from the error
// (INVALID_ARGUMENTS) instead of the registry's terser refusal.

/** Every key a send can press, as one phrase for errors and the parameter's description. */
export const KEY_NAMES_PHRASE = `${TERMINAL_KEY_NAMES.join(', ')}, C-<key> (Ctrl, e.g. "C-c"), M-<key> (Alt, e.g. "M-x"), or any single character as itself (e.g. "q", ":")`

/** Bad keys named in one error before the rest are only counted. */
const MAX_LISTED_KEY_PROBLEMS = 5

/** Names a model may reach for that mean one of ours (lower case). */
const KEY_ALIASES: Readonly<Record<string, string>> = {
  esc: 'Escape',
  return: 'Enter',
  ret: 'Enter',
  del: 'Delete',
  ins: 'Insert',
  pgup: 'PageUp',
  pgdn: 'PageDown',
  pagedn: 'PageDown',
  arrowup: 'Up',
  arrowdown: 'Down',
  arrowleft: 'Left',
  arrowright: 'Right',
  backtab: 'S-Tab',
  'shift-tab': 'S-Tab',
  bs: 'Backspace',
}

/** Control characters typed as keys, by the name that presses them. */
const CONTROL_KEYS: Readonly<Record<string, string>> = { '\r': 'Enter', '\n': 'Enter', '\t': 'Tab', '\u001b': 'Escape', '\u007f': 'Backspace' }

/**
 * The key name a model probably meant by `key`, or undefined: a name in another case (`enter`), a
 * common alias (`Esc`, `PgDn`), `Ctrl-x`/`Alt-x`/`^X` for `C-x`/`M-x`, a raw control character.
 */
export function suggestKeyName(key: string): string | undefined {
  const lower = key.toLowerCase()
  const named = TERMINAL_KEY_NAMES.find((name) => name.toLowerCase() === lower) ?? KEY_ALIASES[lower] ?? CONTROL_KEYS[key]
  if (named) return named
  const modified = /^(ctrl|control|alt|meta|c|m)[-+](.+)$/i.exec(key)
  if (modified) {
    const prefix = /^(ctrl|control|c)$/i.test(modified[1]!) ? 'C-' : 'M-'
    const rest = modified[2]!
    const candidate = `${prefix}${prefix === 'C-' && rest.length === 1 ? rest.toLowerCase() : (suggestKeyName(rest) ?? rest)}`
    return candidate !== key && keyNameProblem(candidate) === undefined ? candidate : undefined
  }
  if (/^\^[A-Za-z]$/.test(key)) return `C-${key[1]!.toLowerCase()}`
  const code = key.length === 1 ? key.charCodeAt(0) : -1
  if (code >= 1 && code <= 26) return `C-${String.fromCharCode(code + 96)}`
  return undefined
}

/**
 * Why some of `keys` cannot be pressed, as one message a model can act on (each bad key with its
 * index and a likely meant name, then every valid name), or undefined when all can be.
 */
export function keysProblem(keys: readonly string[]): string | undefined {
  const problems: string[] = []
  keys.forEach((key, index) => {
    const problem = keyNameProblem(key)
    if (problem === undefined) return
    const suggestion = suggestKeyName(key)
    problems.push(`keys[${index}]: ${problem}${suggestion ? ` (did you mean "${suggestion}"?)` : ''}`)
  })
  if (!problems.length) return undefined
  const listed = problems.slice(0, MAX_LISTED_KEY_PROBLEMS)
  if (problems.length > listed.length) listed.push(`and ${problems.length - listed.length} more`)
  return `${listed.join('; ')}. A key is one of ${KEY_NAMES_PHRASE}. To type text, give text instead of keys`
}
