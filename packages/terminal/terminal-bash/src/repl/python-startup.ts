import { existsSync, readFileSync, realpathSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** Environment variable that hands a REPL its marker nonce (popped by the startup file, so programs it starts do not see it). */
export const REPL_NONCE_VARIABLE = 'DSH_PYTHON_MARKER'

/** Where the user's own PYTHONSTARTUP travels, so the marking startup file can run it first. */
export const USER_PYTHONSTARTUP_VARIABLE = 'DSH_USER_PYTHONSTARTUP'

let located: string | null | undefined
let source: string | null | undefined

/**
 * The startup file that marks Python's prompts (`python-startup.py`), which ships in the package's
 * `src`: next to this module when running from source, `../src/repl` from the bundled `dist`;
 * canonical, as a sandbox shows it there.
 * `undefined` when it cannot be found (then Python is told apart by its stdin wait, as before).
 */
export function pythonStartupFile(): string | undefined {
  if (located === undefined) {
    const candidates = [new URL('./python-startup.py', import.meta.url), new URL('../src/repl/python-startup.py', import.meta.url)]
    const found = candidates.map((url) => fileURLToPath(url)).find((path) => existsSync(path))
    located = found === undefined ? null : canonical(found)
  }
  return located ?? undefined
}

/** A sandbox shows a file at its canonical path only; `null` if it vanished meanwhile. */
function canonical(path: string): string | null {
  try {
    return realpathSync(path)
  } catch {
    return null
  }
}

/**
 * The variables that make an interactive Python in this shell mark its prompts with `nonce`,
 * chaining `userStartup` (the host's own PYTHONSTARTUP) when there is one.
 */
export function pythonStartupEnvironment(file: string, nonce: number, userStartup: string | undefined): Record<string, string> {
  const env: Record<string, string> = { PYTHONSTARTUP: file, [REPL_NONCE_VARIABLE]: String(nonce) }
  if (userStartup) env[USER_PYTHONSTARTUP_VARIABLE] = userStartup
  return env
}

/**
 * What a shell on another machine needs for a marked Python REPL: the startup file's content, for
 * the provider to write there (`envFiles`: the path of this install means nothing on the target),
 * and the nonce. `undefined` when the file cannot be read (Python is then told apart by its stdin wait).
 * The host's own PYTHONSTARTUP is this machine's too, and does not travel.
 */
export function pythonStartupElsewhere(nonce: number): { env: Record<string, string>; envFiles: Record<string, string> } | undefined {
  if (source === undefined) {
    const file = pythonStartupFile()
    try {
      source = file === undefined ? null : readFileSync(file, 'utf8')
    } catch {
      source = null
    }
  }
  if (source === null) return undefined
  return { env: { [REPL_NONCE_VARIABLE]: String(nonce) }, envFiles: { PYTHONSTARTUP: source } }
}
