import type { Agent } from 'dsh-agent'
import type { BackendRegistry } from './backends'
import type { DetachedSessions } from './detached'
import type { ElsewhereSessions } from './elsewhere'
import { refuse } from './errors'
import type { LostSessions } from './lost'
import type { OwnerState } from './owner-state'
import type { SessionRecord } from './session-record'
import type { TerminalSessionId, TerminalSessionSnapshot, TerminalSpawnRequest, TerminalSpawnResult } from './types'

/** What resuming needs of the registry: its tables, its limits and the steps it shares with spawning. */
export interface ResumeHost {
  readonly sessions: ReadonlyMap<TerminalSessionId, SessionRecord>
  readonly owners: ReadonlyMap<Agent, OwnerState>
  readonly backends: BackendRegistry
  readonly detached: DetachedSessions
  readonly elsewhere: ElsewhereSessions
  readonly lost: LostSessions
  readonly detachedTtlMs: number
  readonly maxSessions: number
  /** Refuses a disposing registry or an owner that is not live. */
  assertOwner(owner: Agent): void
  /** Whether the record's session host died (it is then dropped). */
  isLost(record: SessionRecord): boolean
  /** Start tracking an owner. */
  adopt(owner: Agent): OwnerState
  /** Spawn, under `id`, the session another host process detached, as `spawn` would. */
  spawnResumed(owner: Agent, request: TerminalSpawnRequest, id: TerminalSessionId): Promise<TerminalSpawnResult>
}

/**
 * Taking over detached sessions: the registry's own (kept after their owner ended) and those other
 * host processes left behind (their backends' `listDetached`). Exactly one adopter wins each.
 */
export class Resumptions {
  /** Ids of other processes' detached sessions being adopted here now: a second resume is `SESSION_ADOPTED`. */
  readonly #resuming = new Set<string>()

  constructor(private readonly host: ResumeHost) {}

  /** Whether another process's detached session `id` is being adopted here now. */
  adopting(id: string): boolean {
    return this.#resuming.has(id)
  }

  /**
   * Adopt a detached session for `owner`. The claim is synchronous (a second caller gets
   * `SESSION_ADOPTED`); the promise settles once a send released at detachment let go of the session.
   */
  resume(owner: Agent, id: TerminalSessionId, type: string): Promise<TerminalSessionSnapshot> {
    const host = this.host
    host.assertOwner(owner)
    if (typeof id !== 'string' || id === '') throw refuse.invalid('PTY resume needs the id of a detached session')
    const record = host.sessions.get(id)
    if (record && host.isLost(record)) throw refuse.hostLost(id)
    if (!record) {
      if (host.lost.concerns(id, owner)) throw refuse.hostLost(id)
      if (!host.backends.get(type)?.resume || host.detachedTtlMs === 0) throw refuse.notDetached(id, false)
      if (this.#resuming.has(id)) throw refuse.adopted(id)
      return this.#resumeElsewhere(owner, id, type)
    }
    if (record.closing) throw refuse.notDetached(id, false)
    if (record.detachedAt === undefined) {
      if (record.owner === owner) throw refuse.notDetached(id, true)
      throw record.adopted ? refuse.adopted(id) : refuse.notDetached(id, false)
    }
    if (record.type !== type)
      throw refuse.invalid(`PTY session ${id} is of type ${JSON.stringify(record.type)}, not ${JSON.stringify(type)}: resume it with that type`)
    let state = host.owners.get(owner)
    if (record.name !== undefined && state?.nameTaken(record.name)) throw refuse.duplicateName(record.name)
    if (state && state.sessions() >= host.maxSessions) throw refuse.sessionLimit(owner, host.maxSessions)
    state ??= host.adopt(owner)
    host.detached.take(record.id)
    const released = record.adopt(owner)
    state.records.set(record.id, record)
    return released.then(() => record.snapshot())
  }

  /** The detached sessions other host processes left (their backends' `listDetached`), for `list`'s callers to add. */
  async listElsewhere(owner: Agent): Promise<TerminalSessionSnapshot[]> {
    const host = this.host
    host.assertOwner(owner)
    if (host.detachedTtlMs === 0) return []
    const backends = host.backends.types().flatMap((type) => host.backends.get(type) ?? [])
    return host.elsewhere.list(backends, (id) => host.sessions.has(id) || this.#resuming.has(id))
  }

  /** Adopt a session another host process detached (checked by `resume`): the backend rebuilds it, published under its id. */
  async #resumeElsewhere(owner: Agent, id: TerminalSessionId, type: string): Promise<TerminalSessionSnapshot> {
    const host = this.host
    // Taken at once, so a second resume of the id is SESSION_ADOPTED while this one looks and adopts.
    this.#resuming.add(id)
    try {
      // A look now: an earlier one may predate this session's detachment (its host had not hung up yet).
      const backend = host.backends.get(type)
      if (backend) await host.elsewhere.list([backend], () => false)
      // It keeps its name unless the adopter already uses that name for a session of its own.
      const name = host.elsewhere.nameOf(id)
      const keepName = name !== undefined && !host.owners.get(owner)?.nameTaken(name)
      const target = host.elsewhere.targetOf(id)
      const request: TerminalSpawnRequest = { type, ...(keepName ? { name } : {}), ...(target === undefined ? {} : { target }) }
      const { motd: _motd, ...snapshot } = await host.spawnResumed(owner, request, id)
      return snapshot
    } finally {
      this.#resuming.delete(id)
    }
  }
}
