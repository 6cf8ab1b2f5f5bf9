import type { Agent } from 'dsh-agent'
import type { PendingSpawn } from './pending-spawn'
import type { SessionRecord } from './session-record'
import type { TerminalSessionId } from './types'

/**
 * Everything the service tracks for one exact owner: published records in publication order,
 * unpublished spawns, cleanup failures not yet reported, and the cleanup hook on its scope.
 */
export class OwnerState {
  /** Published sessions, in publication order (closing and exited ones included). */
  readonly records = new Map<TerminalSessionId, SessionRecord>()
  /** Spawns between their first check and publication or rollback. */
  readonly pending = new Set<PendingSpawn>()
  /** Cleanup failures kept as activity until owner or service disposal reports them. */
  readonly failures: unknown[] = []
  /** Set when the owner's cleanup began: no new spawn may be published for it. */
  disposed = false
  #detached = false
  #detach: (() => Promise<void>) | undefined

  constructor(
    /** The exact owner. */
    readonly owner: Agent,
  ) {}

  /** True from a spawn's first moment to the end of the last close, and while a failure is unreported. */
  hasActivity(): boolean {
    return this.records.size > 0 || this.pending.size > 0 || this.failures.length > 0
  }

  /** Sessions this owner holds against its limit: published ones not yet closed, and spawns in flight. */
  sessions(): number {
    return this.records.size + this.pending.size
  }

  /** Whether `name` is taken by a published or in-flight session of this owner. */
  nameTaken(name: string): boolean {
    for (const record of this.records.values()) if (record.name === name) return true
    for (const spawn of this.pending) if (spawn.name === name) return true
    return false
  }

  /** Attach `cleanup` to the owner's scope once; Agent.dispose awaits it and reports its failure. */
  attach(cleanup: () => Promise<void>): void {
    this.#detach = this.owner.own(async () => {
      if (!this.#detached) await cleanup()
    }, 'terminals: close owned sessions')
  }

  /** Make the hook inert and release it (service disposal already closed everything). */
  detach(): void {
    this.#detached = true
    const detach = this.#detach
    this.#detach = undefined
    detach?.().catch(() => {})
  }
}
