/** Stable codes of {@link SandboxPolicyError}, for callers that route on failures. */
export type SandboxPolicyErrorCode =
  /** The owner has ended (or is ending); it has no policy any more. */
  | 'OWNER_NOT_LIVE'
  /** The value is not one of read-only, workspace-write, danger-full-access. */
  | 'INVALID_MODE'
  /** A mode change listener refused the change; nothing was committed. The message is the listener's. */
  | 'MODE_CHANGE_VETOED'
  /** A working directory does not exist or is not a directory. */
  | 'INVALID_CWD'
  /** A working directory lies outside the workspace under a confined mode. */
  | 'CWD_OUTSIDE_WORKSPACE'

/** Raised by `ctx.sandboxPolicy`; `code` is stable, the message is for humans and models. */
export class SandboxPolicyError extends Error {
  constructor(
    /** Stable code for routing. */
    readonly code: SandboxPolicyErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options)
    this.name = 'SandboxPolicyError'
  }
}
