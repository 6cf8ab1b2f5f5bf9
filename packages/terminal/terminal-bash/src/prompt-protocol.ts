import { randomInt } from 'node:crypto'

/** The controlled primary prompt; readiness compares the text after the latest marker with it exactly. */
export const SHELL_PROMPT = 'dsh> '

/** The visible continuation prompt (heredoc, unclosed quote): what follows the continuation marker. */
export const SHELL_CONTINUATION_PROMPT = '> '

/**
 * PS2 as the shell gets it: the continuation marker `OSC 133;A;k=c;<nonce> BEL` (inside `\[ \]`, so
 * readline does not count it as width), then {@link SHELL_CONTINUATION_PROMPT}. Bash prints PS2
 * exactly when it needs more of the command, so the marker makes "continuation" exact. The nonce is
 * expanded from the unexported `__dsh_n` each time (promptvars), so a nested bash, which inherits
 * PS2 but not the variable, prints a marker without a number, which is not this session's.
 */
export const SHELL_CONTINUATION_PS2 = `\\[\\e]133;A;k=c;\${__dsh_n}\\a\\]${SHELL_CONTINUATION_PROMPT}`

/** Environment variable that hands the session's marker nonce to the shell once (it is unset at the first prompt). */
export const NONCE_VARIABLE = 'DSH_PROMPT_NONCE'

const NONCE_MIN = 100_000
const NONCE_MAX = 999_999
const STATUS_SPAN = 1_000

/**
 * Runs before every primary prompt. It captures `$?`, moves the nonce from the environment into a
 * shell variable that child processes do not inherit, emits `OSC 133;D;<nonce><status:3> BEL`, and
 * re-asserts both prompts so a user's `PS1=` heals at the next prompt. Bash restores `$?` after
 * `PROMPT_COMMAND`, so the user still sees the command's own status.
 */
export const SHELL_PROMPT_COMMAND =
  `__dsh_s=$?; __dsh_n=\${__dsh_n:-$${NONCE_VARIABLE}}; unset ${NONCE_VARIABLE}; ` +
  `builtin printf '\\033]133;D;%s%03d\\007' "$__dsh_n" "$__dsh_s"; ` +
  `PS1='${SHELL_PROMPT}'; PS2='${SHELL_CONTINUATION_PS2}'`

/**
 * A fresh per-session nonce. With it, a marker proves that the session's own shell ran its
 * `PROMPT_COMMAND` (bash prints its prompt only once it owns the terminal again); a marker printed
 * by a child (a nested bash inherits `PROMPT_COMMAND` but not the variable), replayed from a log
 * or typed by hand carries another number and is ignored.
 */
export function createPromptNonce(): number {
  return randomInt(NONCE_MIN, NONCE_MAX + 1)
}

/**
 * The exit status carried by a marker whose status field is `<nonce><status:3>`, or `undefined`
 * when the marker is not this session's (another nonce, no number at all). The sanitizer parses at
 * most nine digits, which is exactly six of nonce and three of status.
 */
export function decodeMarkerStatus(status: number | null | undefined, nonce: number): number | undefined {
  if (typeof status !== 'number' || Math.floor(status / STATUS_SPAN) !== nonce) return undefined
  const exit = status % STATUS_SPAN
  return exit <= 255 ? exit : undefined
}
