import { SubprocessError, type SubprocessErrorCode, TerminalCleanupError } from 'dsh-subprocess'
import type { WireError } from 'dsh-session-host'

/** The seam's codes a session host may answer with; they are raised as the in-process provider raises them. */
const SEAM_CODES: ReadonlySet<string> = new Set<SubprocessErrorCode>([
  'UNSUPPORTED_PLATFORM',
  'INVALID_SPEC',
  'SPAWN_ABORTED',
  'SPAWN_FAILED',
  'NO_FOREGROUND_GROUP',
  'REFUSED_SHELL_KILL',
  'TERMINAL_EXITED',
  'CLEANUP_FAILED',
  'TERMINAL_ADOPTED',
  'TERMINAL_NOT_FOUND',
])

/** A session host refused a call for a reason of the protocol (`UNKNOWN_TERMINAL`, …) or failed inside. */
export class SessionHostCallError extends Error {
  constructor(
    /** The session host's stable code. */
    readonly code: string,
    message: string,
  ) {
    super(message)
    this.name = 'SessionHostCallError'
  }
}

/** The error to raise for a failed reply: a `SubprocessError` for the seam's codes, else a {@link SessionHostCallError}. */
export function errorFromWire(error: WireError): Error {
  if (error.code === 'CLEANUP_FAILED') return new TerminalCleanupError(error.survivors ?? [])
  // The session host's cap: the spawn could not start, which the seam calls SPAWN_FAILED; the message keeps the code.
  if (error.code === 'TOO_MANY_TERMINALS') return new SubprocessError('SPAWN_FAILED', `TOO_MANY_TERMINALS: ${error.message}`)
  if (SEAM_CODES.has(error.code)) return new SubprocessError(error.code as SubprocessErrorCode, error.message)
  return new SessionHostCallError(error.code, error.message)
}

/** The connection to the session host ended: `why` says how, for a model that reads the message. */
export function sessionHostLost(why: string): SubprocessError {
  return new SubprocessError(
    'SESSION_HOST_LOST',
    `the session host is gone (${why}); its terminals ended with it. Open a new terminal: a fresh session host starts.`,
  )
}

/**
 * A call whose request does not fit one frame (1 MiB of JSON): refused here, before anything is sent,
 * so the link and the other terminals on it live on.
 */
export function requestTooLarge(method: string, cause: Error): SubprocessError {
  return new SubprocessError(
    'INVALID_SPEC',
    `the ${method} request is too large for one frame of the session host protocol (1 MiB of JSON; a control character counts six bytes): ${cause.message}. Nothing was sent; send less argv, env or envFiles content.`,
    { cause },
  )
}

/** The link stopped carrying bytes: nothing came back within `livenessMs` of a ping sent after `livenessMs` of silence. */
export function targetUnreachable(livenessMs: number): SubprocessError {
  return new SubprocessError(
    'TARGET_UNREACHABLE',
    `the session host did not answer for ${2 * livenessMs} ms, not even a liveness ping (a cut network, a stopped relay or ssh); this connection is given up. Durable terminals stay detached on the far side: open again to adopt them; other terminals end there once it notices.`,
  )
}

/**
 * A durable terminal's link was lost (`cause`) while a call waited on it: the call ends now, the
 * terminal lives on in the session host of its target, and the next call adopts it again.
 */
export function linkLostDuringCall(cause: Error): SubprocessError {
  return new SubprocessError(
    'TARGET_UNREACHABLE',
    "the link to this terminal's target was lost while the call waited (it went silent past the liveness check, or its connect command ended). The session is kept on the target and will be adopted again on the next call: send again (an empty send only waits) to see what it printed meanwhile, once and in order.",
    { cause },
  )
}

/**
 * A call on a durable terminal whose link is down, and a try to reach its target again (`cause`:
 * the loss) failed: the terminal is still kept there, and a later call tries again.
 */
export function targetStillDown(cause: Error): SubprocessError {
  return new SubprocessError(
    'TARGET_UNREACHABLE',
    "this terminal's target still does not answer (its link was lost and a try to reach it again failed); nothing was done. The session is kept on the target for its detached TTL: call again once the target is back, and it is adopted again with its output.",
    { cause },
  )
}
