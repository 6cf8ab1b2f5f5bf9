import type { TerminalBackend, TerminalBackendSession } from './backend'
import { TerminalBackendCleanupError } from './errors'
import type { PendingSpawn } from './pending-spawn'
import type { SessionListeners } from './session-observers'
import type { TerminalBackendSpawnSpec, TerminalSpawnRequest, TerminalSpawnResult } from './types'

/** How the registry runs one spawn beyond its request. */
export interface SpawnOptions {
  /** The registry's `detachedTtlMs`, when > 0 (passed to the backend). */
  readonly detachedTtlMs?: number
  /** Adopt the session of the reserved id through `backend.resume` instead of spawning one. */
  readonly resume?: boolean
}

/** Reason recorded on the backend session when an unpublished spawn is undone. */
export const ROLLBACK_REASON = 'PTY spawn rolled back'

/** Message of the AggregateError raised when a spawn failed and so did its cleanup. */
export const ROLLBACK_FAILED_MESSAGE = 'PTY spawn and rollback both failed'

/** What the registry lends a running spawn: the re-checks, publication, and failure retention. */
export interface SpawnRegistry {
  /** Why this spawn may not be published now (lifecycle, disposal, owner), or undefined. */
  refusal(pending: PendingSpawn): { error: unknown } | undefined
  /** Publish synchronously; returns the owner-visible result. */
  publish(pending: PendingSpawn, type: string, session: TerminalBackendSession, listeners: SessionListeners | undefined): TerminalSpawnResult
  /** Keep a cleanup failure as the owner's activity until disposal reports it. */
  retain(pending: PendingSpawn, failure: unknown): void
}

/**
 * Run backend setup for a reserved spawn, then publish or roll back. Precedence of the rejection:
 * the caller's exact abort reason, then the lifecycle (reservation) reason, then the original error.
 * Session observers (`listeners`) get the raw output from the first byte, and hear a failed spawn end.
 */
export async function runSpawn(
  registry: SpawnRegistry,
  backend: TerminalBackend,
  pending: PendingSpawn,
  request: TerminalSpawnRequest,
  callerSignal: AbortSignal | undefined,
  listeners?: SessionListeners,
  options: SpawnOptions = {},
): Promise<TerminalSpawnResult> {
  try {
    return await spawnAndPublish(registry, backend, pending, request, callerSignal, listeners, options)
  } catch (error) {
    listeners?.ended('the spawn failed')
    throw error
  }
}

async function spawnAndPublish(
  registry: SpawnRegistry,
  backend: TerminalBackend,
  pending: PendingSpawn,
  request: TerminalSpawnRequest,
  callerSignal: AbortSignal | undefined,
  listeners: SessionListeners | undefined,
  options: SpawnOptions,
): Promise<TerminalSpawnResult> {
  const signal = callerSignal ? AbortSignal.any([callerSignal, pending.signal]) : pending.signal
  const spec: TerminalBackendSpawnSpec = { type: request.type, sessionId: pending.id, owner: pending.owner, signal }
  if (request.name !== undefined) spec.name = request.name
  if (request.cwd !== undefined) spec.cwd = request.cwd
  if (request.target !== undefined) spec.target = request.target
  if (request.size !== undefined) spec.size = { rows: request.size.rows, cols: request.size.cols }
  if (listeners?.wantsOutput) spec.onOutput = (bytes) => listeners.output(bytes)
  if (options.detachedTtlMs) spec.detachedTtlMs = options.detachedTtlMs

  let session: TerminalBackendSession
  try {
    session = await (options.resume && backend.resume ? backend.resume(spec) : backend.spawn(spec))
  } catch (error) {
    const cleanup = error instanceof TerminalBackendCleanupError ? { error: error.cleanupError } : undefined
    throw failure(registry, pending, callerSignal, error, cleanup)
  }

  const refusal = callerSignal?.aborted ? { error: callerSignal.reason } : registry.refusal(pending)
  if (!refusal) return registry.publish(pending, request.type, session, listeners)

  let rollback: { error: unknown } | undefined
  try {
    await session.close(ROLLBACK_REASON)
  } catch (error) {
    rollback = { error }
  }
  throw failure(registry, pending, callerSignal, refusal.error, rollback)
}

/** Choose what the spawn rejects with; a cleanup failure is always retained for disposal as well. */
function failure(
  registry: SpawnRegistry,
  pending: PendingSpawn,
  callerSignal: AbortSignal | undefined,
  original: unknown,
  cleanup: { error: unknown } | undefined,
): unknown {
  if (cleanup) registry.retain(pending, cleanup.error)
  if (callerSignal?.aborted) return callerSignal.reason
  const primary = pending.signal.aborted ? pending.signal.reason : original
  if (!cleanup) return primary
  if (primary === original && original instanceof TerminalBackendCleanupError) return original
  return new AggregateError([primary, cleanup.error], ROLLBACK_FAILED_MESSAGE)
}
