import { errorMessage, keepUtf8Tail } from 'dsh-basics'

/** Every code a {@link ShellBackendError} can carry, as a runtime list for routing and docs. */
export const SHELL_BACKEND_ERROR_CODES = [
  'INVALID_CWD',
  'SANDBOX_REQUIRED',
  'SANDBOX_INVALID_ARGV',
  'TARGET_NOT_CONFINABLE',
  'STARTUP_TIMEOUT',
  'STARTUP_EXITED',
  'SESSION_CLOSED',
] as const

/** Stable code of a shell backend failure; route on this, never on the message. */
export type ShellBackendErrorCode = (typeof SHELL_BACKEND_ERROR_CODES)[number]

/** A failure of the shell backend itself; the message is safe to show to a model. */
export class ShellBackendError extends Error {
  constructor(
    /** Why the backend refused or failed. */
    readonly code: ShellBackendErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options)
    this.name = 'ShellBackendError'
  }
}

/** True for a {@link ShellBackendError}, optionally of one code (also across package copies). */
export function isShellBackendError(error: unknown, code?: ShellBackendErrorCode): error is ShellBackendError {
  if (!(error instanceof Error) || error.name !== 'ShellBackendError') return false
  const actual = (error as Partial<ShellBackendError>).code
  return typeof actual === 'string' && (code === undefined || actual === code)
}

/** Constructors for each failure, so every message is written in exactly one place. */
export const shellFailure = {
  emptyCwd: () => new ShellBackendError('INVALID_CWD', 'PTY working directory must be a non-empty path'),
  missingCwd: (path: string) => new ShellBackendError('INVALID_CWD', `PTY working directory ${JSON.stringify(path)} does not exist`),
  notDirectory: (path: string) => new ShellBackendError('INVALID_CWD', `PTY working directory ${JSON.stringify(path)} is not a directory`),
  unreadableCwd: (path: string, cause: unknown) =>
    new ShellBackendError('INVALID_CWD', `PTY working directory ${JSON.stringify(path)} cannot be used: ${errorMessage(cause)}`, { cause }),
  sandboxRequired: (mode: string) =>
    new ShellBackendError(
      'SANDBOX_REQUIRED',
      `sandbox mode ${mode} needs a ctx.sandbox provider in this context (mount dsh-sandbox-local); the shell was not started. ` +
        'A deployment that wants no confinement sets the mode danger-full-access explicitly',
    ),
  sandboxInvalidArgv: (mode: string) =>
    new ShellBackendError('SANDBOX_INVALID_ARGV', `the sandbox provider returned no command to run for mode ${mode}; the shell was not started`),
  confinedElsewhere: (mode: string, target: string) =>
    new ShellBackendError(
      'TARGET_NOT_CONFINABLE',
      `mode ${mode} confines a session with this machine's sandbox, which cannot wrap a session on target ${JSON.stringify(target)}. ` +
        'Run the MCP host on that machine or in that container (one workspace per container, see deploy/), where its own sandbox applies, ' +
        'or set the mode danger-full-access for a composition whose sessions run on targets',
    ),
  relativeCwdElsewhere: (cwd: string, target: string) =>
    new ShellBackendError(
      'INVALID_CWD',
      `PTY working directory ${JSON.stringify(cwd)} must be an absolute path on target ${JSON.stringify(target)} (it is checked there)`,
    ),
  startupTimeout: () => new ShellBackendError('STARTUP_TIMEOUT', 'PTY shell did not reach readiness before startup timeout'),
  startupExited: (exit: unknown, printed = '') =>
    new ShellBackendError('STARTUP_EXITED', `PTY shell exited during startup${startupWords(printed)}`, { cause: exit }),
  closed: () => new ShellBackendError('SESSION_CLOSED', 'PTY session is closed'),
}

/** Most UTF-8 bytes of a failed startup's last output quoted in its error: enough for a launcher's one-line reason. */
const STARTUP_WORDS_LIMIT = 300

/**
 * What a shell that exited during startup printed last (a sandbox's mount-check refusal, bash's own
 * fatal error), as `: <text>`; nothing when it printed nothing.
 */
function startupWords(printed: string): string {
  const lines = printed
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '')
  const text = lines.slice(-3).join(' / ')
  if (text === '') return ''
  const kept = keepUtf8Tail(text, STARTUP_WORDS_LIMIT)
  return `: ${kept.length < text.length ? `…${kept}` : text}`
}
