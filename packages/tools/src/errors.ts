/**
 * Stable codes of the errors raised or reported by `ctx.tools`; hosts and tests route on these,
 * never on message text.
 */
export type ToolErrorCode =
  | 'UNKNOWN_TOOL'
  | 'INVALID_ARGUMENTS'
  | 'NO_AGENT'
  | 'AGENT_ENDED'
  | 'CANCELLED'
  | 'TOOL_FAILED'
  | 'INVALID_RESULT'
  | 'FINALIZE_FAILED'
  | 'INVALID_TOOL'
  | 'DUPLICATE_TOOL'
  | 'DUPLICATE_GUIDANCE'
  | 'INVALID_GUIDANCE'
  | 'INVALID_OBSERVER'

/** An error with a stable `code`; tools may throw it (or any error with a string `code`) too. */
export class ToolError extends Error {
  constructor(
    /** Stable code; a tool's own codes (e.g. `SEND_ACTIVE`) pass through execution unchanged. */
    readonly code: ToolErrorCode | (string & {}),
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options)
    this.name = 'ToolError'
  }
}

/** The string `code` a thrown value carries, if any (Node system errors and ToolError both do). */
export function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code
  return typeof code === 'string' && code.length > 0 ? code : undefined
}
