import type { LinePatternErrorCode } from 'dsh-basics'
import { ToolError } from 'dsh-tools'

/**
 * Codes this package adds to the ones `dsh-terminal` and `dsh-tools` already report.
 * `UNSUPPORTED_PATTERN` is a `waitFor` that only a backtracking engine takes (backreferences,
 * lookaround) or one too large: `LinePattern.compile` (dsh-basics) raises it with that code.
 */
export type TerminalToolErrorCode = 'JOBS_UNAVAILABLE' | 'CANCELLED' | 'NO_SCREEN' | Extract<LinePatternErrorCode, 'UNSUPPORTED_PATTERN'>

/** A refusal by a terminal tool; the pipeline turns it into `Error: <message>` with this `code`. */
export function terminalToolError(code: TerminalToolErrorCode, message: string): ToolError {
  return new ToolError(code, message)
}

/** A background send was asked for, but no `ctx.jobs` is mounted: refused before anything is written. */
export function jobsUnavailable(): ToolError {
  return terminalToolError(
    'JOBS_UNAVAILABLE',
    'run_in_background needs the background job service (ctx.jobs, plugin dsh-jobs), which is not mounted; nothing was sent. Send in the foreground instead.',
  )
}

/** The tool call was cancelled while its send ran; the backend interrupted the foreground group. */
export function sendCancelled(sessionId: string): ToolError {
  return terminalToolError(
    'CANCELLED',
    `terminal_send on ${sessionId} was cancelled; SIGINT was sent to its foreground process group. Use terminal_read to see the output.`,
  )
}

/** A screen read of a session whose backend keeps no terminal emulator (or that is closing): its lines can still be read. */
export function noScreen(sessionId: string): ToolError {
  return terminalToolError(
    'NO_SCREEN',
    `terminal session ${sessionId} has no screen to show: its backend keeps no terminal emulator, or the session is closing. Read its output with terminal_read without view.`,
  )
}
