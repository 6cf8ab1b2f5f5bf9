import { refuse } from './errors'
import { keyNameProblem, MAX_TERMINAL_KEYS } from './keys'
import { MAX_TERMINAL_COLS, MAX_TERMINAL_ROWS, type TerminalSize } from './screen'
import type { TerminalSendRequest } from './types'

/** A send presses keys or types text, never both; every key must be one a terminal can send. */
export function checkKeys(request: TerminalSendRequest): void {
  const keys = request.keys
  if (!Array.isArray(keys) || keys.length === 0 || keys.length > MAX_TERMINAL_KEYS) {
    throw refuse.invalid(`PTY send keys must be a list of 1 to ${MAX_TERMINAL_KEYS} key names`)
  }
  if (request.text !== '' || request.submit) {
    throw refuse.invalid('PTY send takes keys or text, not both: with keys, text must be empty and submit false (press Enter as a key)')
  }
  for (const key of keys) {
    const problem = typeof key === 'string' ? keyNameProblem(key) : 'a key name must be a string'
    if (problem) throw refuse.invalid(`PTY send keys: ${problem}`)
  }
}

/** A window size within the bounds every backend accepts. */
export function checkSize(size: TerminalSize, what: string): void {
  const ok = (value: unknown, max: number) => Number.isSafeInteger(value) && (value as number) >= 1 && (value as number) <= max
  if (typeof size !== 'object' || size === null || !ok(size.rows, MAX_TERMINAL_ROWS) || !ok(size.cols, MAX_TERMINAL_COLS)) {
    throw refuse.invalid(`${what} must be {rows, cols} with rows from 1 to ${MAX_TERMINAL_ROWS} and cols from 1 to ${MAX_TERMINAL_COLS}`)
  }
}
