/** Stable codes of {@link SandboxError}, for callers that route on failures. */
export type SandboxErrorCode =
  /** The provider cannot confine on this host (missing binary, refused namespaces, host policy). */
  | 'SANDBOX_UNAVAILABLE'
  /** The policy is malformed or names something the provider will not confine. */
  | 'INVALID_POLICY'
  /** The argv to confine is empty. */
  | 'EMPTY_ARGV'
  /** An argv element is not a string or contains a NUL byte. */
  | 'INVALID_ARGV'

/**
 * Raised by `ctx.sandbox` providers. Confinement fails closed: a caller that receives this error
 * must not start the process unconfined.
 */
export class SandboxError extends Error {
  constructor(
    /** Stable code; the message is for humans and may change. */
    readonly code: SandboxErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options)
    this.name = 'SandboxError'
  }
}
