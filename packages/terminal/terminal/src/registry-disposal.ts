import type { Agent } from 'dsh-agent'
import type { BackendRegistry } from './backends'
import type { DetachedSessions } from './detached'
import { combineFailures, refuse } from './errors'
import type { LostSessions } from './lost'
import type { OwnerState } from './owner-state'
import type { SessionRecord } from './session-record'
import type { TerminalSessionId } from './types'

/** Reason passed to backend sessions closed by their owner's disposal. */
export const OWNER_DISPOSED_REASON = 'PTY owner disposed'
/** Reason passed to backend sessions closed by service disposal. */
export const SERVICE_DISPOSED_REASON = 'PTY service disposed'

/** What disposal works on: the registry's tables, the failures kept for it, and its state. */
export interface DisposalTables {
  readonly owners: Map<Agent, OwnerState>
  readonly sessions: Map<TerminalSessionId, SessionRecord>
  readonly backends: BackendRegistry
  readonly detached: DetachedSessions
  readonly lost: LostSessions
  /** Closes of expired or lost sessions that failed: reported by service disposal. */
  readonly expiryFailures: unknown[]
  readonly detachedTtlMs: number
  /** The service is being disposed. */
  disposing(): boolean
  /** Drop a disposed owner's state once nothing of it is left to close or report. */
  forgetIfDone(state: OwnerState): void
}

/** The owner's hook: abort and await its spawns, then close (or, when kept, detach) its sessions; report failures. */
export async function disposeOwner(tables: DisposalTables, state: OwnerState): Promise<void> {
  state.disposed = true
  tables.lost.forgetOwner(state.owner)
  const pending = [...state.pending]
  for (const spawn of pending) spawn.abort(refuse.ownerNotLive(state.owner))
  await Promise.all(pending.map((spawn) => spawn.settled))
  if (tables.detachedTtlMs > 0) detachAll(tables, state)
  const closes = [...state.records.values()].map((record) => record.close(OWNER_DISPOSED_REASON).promise)
  const failures = [...state.failures.splice(0), ...rejections(await Promise.allSettled(closes))]
  tables.forgetIfDone(state)
  if (failures.length) throw combineFailures(failures, `PTY cleanup of agent ${state.owner.id} failed`)
}

/** Keep an ended owner's sessions, detached (those already closing finish closing). */
function detachAll(tables: DisposalTables, state: OwnerState): void {
  for (const record of [...state.records.values()]) {
    if (record.closing || tables.disposing()) continue
    state.records.delete(record.id)
    tables.detached.add(record)
  }
}

/**
 * Service disposal: abort and await every pending spawn, close every session (a detached one whose
 * terminal outlives this process is left to it), always clear the tables, then report every failure.
 */
export async function disposeAll(tables: DisposalTables): Promise<void> {
  const failures: unknown[] = []
  tables.detached.clear()
  try {
    const pending = [...tables.owners.values()].flatMap((state) => [...state.pending])
    for (const spawn of pending) spawn.abort(refuse.disposing())
    await Promise.all(pending.map((spawn) => spawn.settled))
    // A detached session whose terminal outlives this process is left to it (its session host keeps
    // it for another host process to resume); every other session is closed.
    const closes = [...tables.sessions.values()].map((record) =>
      record.detachedAt !== undefined && record.session.leave?.() === true ? Promise.resolve() : record.close(SERVICE_DISPOSED_REASON).promise,
    )
    const closeFailures = rejections(await Promise.allSettled(closes))
    for (const state of tables.owners.values()) failures.push(...state.failures.splice(0))
    failures.push(...tables.expiryFailures.splice(0), ...closeFailures)
  } finally {
    for (const state of tables.owners.values()) state.detach()
    tables.owners.clear()
    tables.sessions.clear()
    tables.backends.clear()
  }
  if (failures.length) throw combineFailures(failures, 'PTY service disposal failed')
}

function rejections(results: PromiseSettledResult<unknown>[]): unknown[] {
  return results.flatMap((result) => (result.status === 'rejected' ? [result.reason] : []))
}
