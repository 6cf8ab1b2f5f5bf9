import { keepUtf8Head } from 'dsh-basics'

/** Default bound of one string argument in a record, in UTF-8 bytes. */
export const DEFAULT_MAX_ARGUMENT_BYTES = 1024

/** Nesting kept of an argument object; deeper values are replaced by a marker. */
const MAX_DEPTH = 6

/** Entries kept of one array or object argument. */
const MAX_ENTRIES = 64

/** What stands in for typed input that was not logged (never its length: that tells about a password). */
export const SECRET_PLACEHOLDER = '[not logged: typed while the terminal asked for a password]'

/** What stands in for typed input when the terminal could not tell what it waited for. */
export const UNKNOWN_INPUT_PLACEHOLDER = '[not logged: the terminal could not tell whether it asked for a password]'

/** What stands in for the value of an argument whose name says it holds a credential. */
export const CREDENTIAL_PLACEHOLDER = '[redacted: credential-named argument]'

/**
 * Argument names whose value is never written: any name containing password, passwd, passphrase,
 * secret, token, credential, or an api/access/private key. The family's tools have none today; a
 * tool added later that takes one is covered without a change here.
 */
const CREDENTIAL_NAME = /pass(?:word|wd|phrase)|secret|token|credential|(?:api|access|private)[_-]?key/i

/**
 * Tools whose arguments are typed into a terminal: the argument naming the session, and the ones
 * that carry what is typed. Their values are logged only when the terminal was seen, right before
 * the call, waiting for something other than a password.
 */
export const TYPED_INPUT: Readonly<Record<string, { readonly session: string; readonly typed: readonly string[] }>> = Object.freeze({
  terminal_send: { session: 'sessionId', typed: ['text', 'keys'] },
})

/** How the terminal stood right before a call typed into it. */
export type TypedInputVerdict = 'clear' | 'secret' | 'unknown'

/** A string cut to `maxBytes` UTF-8 bytes: the kept head and the full size. */
export interface CutText {
  readonly cut: string
  readonly bytes: number
}

/**
 * The arguments of a call as the log keeps them: strings longer than `maxBytes` cut (with their full
 * size), credential-named values replaced, and, for a tool of {@link TYPED_INPUT}, the typed fields
 * replaced unless `verdict` is `clear`.
 */
export function redactArguments(tool: string, args: unknown, maxBytes: number, verdict: TypedInputVerdict | undefined): unknown {
  const typed = TYPED_INPUT[tool]
  if (!typed || !isRecord(args) || verdict === 'clear') return bound(args, maxBytes, 0)
  const placeholder = verdict === 'secret' ? SECRET_PLACEHOLDER : UNKNOWN_INPUT_PLACEHOLDER
  const copy: Record<string, unknown> = { ...args }
  for (const field of typed.typed) if (field in copy) copy[field] = placeholder
  return bound(copy, maxBytes, 0)
}

/** The session a typed-input tool's arguments name, if any. */
export function typedSession(tool: string, args: unknown): string | undefined {
  const typed = TYPED_INPUT[tool]
  if (!typed || !isRecord(args)) return undefined
  const hasInput = typed.typed.some((field) => args[field] !== undefined)
  const session = args[typed.session]
  return hasInput && typeof session === 'string' ? session : undefined
}

/** `value` with strings cut, credential-named keys replaced, and depth and width bounded. */
function bound(value: unknown, maxBytes: number, depth: number): unknown {
  if (typeof value === 'string') return cutString(value, maxBytes)
  if (value === null || typeof value !== 'object')
    return typeof value === 'bigint' || typeof value === 'function' || typeof value === 'symbol' ? String(value) : value
  if (depth >= MAX_DEPTH) return '[nested too deep]'
  if (Array.isArray(value)) {
    const kept = value.slice(0, MAX_ENTRIES).map((item) => bound(item, maxBytes, depth + 1))
    if (value.length > MAX_ENTRIES) kept.push(`[… ${value.length - MAX_ENTRIES} more entries]`)
    return kept
  }
  const entries = Object.entries(value as Record<string, unknown>)
  const out: Record<string, unknown> = {}
  for (const [key, item] of entries.slice(0, MAX_ENTRIES)) {
    out[cutString(key, 128) as string] = CREDENTIAL_NAME.test(key) ? CREDENTIAL_PLACEHOLDER : bound(item, maxBytes, depth + 1)
  }
  if (entries.length > MAX_ENTRIES) out['…'] = `${entries.length - MAX_ENTRIES} more entries`
  return out
}

/** A string within `maxBytes` as it is; a longer one as `{cut, bytes}` (its head and its full UTF-8 size). */
function cutString(text: string, maxBytes: number): string | CutText {
  const bytes = Buffer.byteLength(text, 'utf8')
  if (bytes <= maxBytes) return text
  return { cut: keepUtf8Head(text, maxBytes), bytes }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
