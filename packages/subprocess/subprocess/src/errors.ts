/**
 * Stable codes callers route on: the spawn could not start (`UNSUPPORTED_PLATFORM`, `INVALID_SPEC`,
 * `SPAWN_ABORTED`, `SPAWN_FAILED`), a foreground signal was not delivered (`NO_FOREGROUND_GROUP`,
 * `REFUSED_SHELL_KILL`), input arrived too late (`TERMINAL_EXITED`), teardown left survivors
 * (`CLEANUP_FAILED`), a provider lost the session host that held its terminals (`SESSION_HOST_LOST`:
 * the connection ended; `TARGET_UNREACHABLE`: the link stopped carrying bytes and a liveness ping went unanswered),
 * or a detached durable terminal could not be adopted (`TERMINAL_ADOPTED`: another client won;
 * `TERMINAL_NOT_FOUND`: no detached terminal has that key, it closed or its TTL passed).
 */
export type SubprocessErrorCode =
  | 'UNSUPPORTED_PLATFORM'
  | 'INVALID_SPEC'
  | 'SPAWN_ABORTED'
  | 'SPAWN_FAILED'
  | 'NO_FOREGROUND_GROUP'
  | 'REFUSED_SHELL_KILL'
  | 'TERMINAL_EXITED'
  | 'CLEANUP_FAILED'
  | 'SESSION_HOST_LOST'
  | 'TARGET_UNREACHABLE'
  | 'TERMINAL_ADOPTED'
  | 'TERMINAL_NOT_FOUND'

/** Error raised by a subprocess provider; `code` is stable, the message is for people. */
export class SubprocessError extends Error {
  constructor(
    /** Stable routing code. */
    readonly code: SubprocessErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options)
    this.name = 'SubprocessError'
  }
}

/**
 * Teardown could not make the session quiescent. `survivors` are the pids still alive; calling
 * `terminate()` again retries against the same identities.
 */
export class TerminalCleanupError extends SubprocessError {
  /** Pids that were still alive (and not zombies) when teardown gave up. */
  readonly survivors: readonly number[]

  constructor(survivors: readonly number[], options?: ErrorOptions) {
    super('CLEANUP_FAILED', `terminal cleanup failed; surviving pids: ${survivors.join(', ')}`, options)
    this.name = 'TerminalCleanupError'
    this.survivors = [...survivors]
  }
}

/** True for a {@link SubprocessError} with the given code (also across package copies). */
export function isSubprocessError(error: unknown, code?: SubprocessErrorCode): error is SubprocessError {
  if (!(error instanceof Error)) return false
  const candidate = error as Partial<SubprocessError>
  if (typeof candidate.code !== 'string') return false
  if (error.name !== 'SubprocessError' && error.name !== 'TerminalCleanupError') return false
  return code === undefined || candidate.code === code
}
