import type { Agent } from 'dsh-agent'
import type { TerminalBackend, TerminalBackendSession, TerminalUnreachableTarget } from './backend'
import { BackendRegistry } from './backends'
import { DETACHED_EXPIRED_REASON, DetachedSessions } from './detached'
import { ElsewhereSessions } from './elsewhere'
import { LostSessions, SESSION_HOST_LOST_REASON } from './lost'
import type { TerminalInputState } from './input-state'
import { DEFAULT_MAX_SESSIONS_PER_AGENT, DEFAULT_MAX_TEXT_BYTES } from './config'
import {
  DEFAULT_HUMAN_ACTIVE_MS,
  MAX_HUMAN_CLIENT_LENGTH,
  type TerminalHumanObserver,
  type TerminalHumanSummary,
  type TerminalHumanView,
  type TerminalHumanViewOptions,
} from './human'
import { combineFailures, refuse } from './errors'
import { sessionNameProblem } from './names'
import type { TerminalScreen } from './screen'
import { checkReadRequest, checkSendRequest, checkSize } from './request-checks'
import { OwnerState } from './owner-state'
import { PendingSpawn } from './pending-spawn'
import { SessionRecord } from './session-record'
import { SessionListeners, type TerminalSessionObserver, type TerminalSessionPublished, type TerminalSessionStart } from './session-observers'

/** A client name a model may read: non-empty, bounded, no control characters. */
function isClientName(client: unknown): client is string {
  return typeof client === 'string' && client.length > 0 && client.length <= MAX_HUMAN_CLIENT_LENGTH && !/\p{Cc}/u.test(client)
}

import { runSpawn, type SpawnRegistry } from './spawn'
import {
  isTerminalSignal,
  TERMINAL_SIGNALS,
  type TerminalReadRequest,
  type TerminalReadResult,
  type TerminalSendHandle,
  type TerminalSendRequest,
  type TerminalSessionId,
  type TerminalSessionSnapshot,
  type TerminalSignal,
  type TerminalSignalResult,
  type TerminalSpawnRequest,
  type TerminalSpawnResult,
} from './types'

/** Reason passed to backend sessions closed by their owner's disposal. */
export const OWNER_DISPOSED_REASON = 'PTY owner disposed'
/** Reason passed to backend sessions closed by service disposal. */
export const SERVICE_DISPOSED_REASON = 'PTY service disposed'

/** How the registry learns whether an agent is the exact registered, live owner. */
export interface RegistryOptions {
  /** True only for the exact registered, live agent object (`ctx.agents.isLive`). */
  isLive(owner: Agent): boolean
  /** Sessions one owner may hold at once, spawns in flight and closing sessions included. */
  maxSessionsPerAgent?: number
  /** UTF-8 bytes of `text` one send may carry. */
  maxTextBytes?: number
  /** How long after a person's keystroke agent sends are refused with `HUMAN_ACTIVE` (0: never; default {@link DEFAULT_HUMAN_ACTIVE_MS}). */
  humanActiveMs?: number
  /** How long an ended owner's sessions stay, detached, for another owner to resume (0, the default: closed at once). */
  detachedTtlMs?: number
}

/**
 * The whole registry state and its rules, independent of Cordis. `TerminalSessionService`
 * forwards to it; this class may use `#private` because it is never proxied.
 */
export class TerminalRegistry {
  readonly #backends = new BackendRegistry()
  readonly #sessions = new Map<TerminalSessionId, SessionRecord>()
  readonly #owners = new Map<Agent, OwnerState>()
  readonly #observers = new Set<TerminalSessionObserver>()
  readonly #isLive: (owner: Agent) => boolean
  readonly #maxSessions: number
  readonly #maxTextBytes: number
  readonly #humanActiveMs: number
  readonly #detachedTtlMs: number
  readonly #detached: DetachedSessions
  readonly #elsewhere = new ElsewhereSessions()
  /** Sessions dropped because their session host died: their next call is `SESSION_HOST_LOST`. */
  readonly #lost = new LostSessions()
  /** Ids of other processes' detached sessions being adopted here now: a second resume is `SESSION_ADOPTED`. */
  readonly #resuming = new Set<string>()
  /** Closes of expired detached sessions that failed: service disposal retries them and reports these. */
  readonly #expiryFailures: unknown[] = []
  #counter = 0
  #disposing = false
  #disposal: Promise<void> | undefined

  constructor(options: RegistryOptions) {
    this.#isLive = options.isLive
    this.#maxSessions = options.maxSessionsPerAgent ?? DEFAULT_MAX_SESSIONS_PER_AGENT
    this.#maxTextBytes = options.maxTextBytes ?? DEFAULT_MAX_TEXT_BYTES
    this.#humanActiveMs = options.humanActiveMs ?? DEFAULT_HUMAN_ACTIVE_MS
    this.#detachedTtlMs = options.detachedTtlMs ?? 0
    this.#detached = new DetachedSessions(this.#detachedTtlMs, (record) => {
      record.close(DETACHED_EXPIRED_REASON).promise.catch((error: unknown) => this.#expiryFailures.push(error))
    })
  }

  /** Register a backend; see `TerminalSessionService.registerBackend`. */
  addBackend(backend: TerminalBackend): () => void {
    if (this.#disposing) throw refuse.disposing()
    const remove = this.#backends.add(backend)
    // Only where sessions are kept detached: a new process must not mint an id a detached terminal holds.
    if (this.#detachedTtlMs > 0) this.#elsewhere.watch(backend)
    return remove
  }

  /** Registered backend types in registration order. */
  listBackends(): string[] {
    return this.#backends.types()
  }

  /** Ask `observer` about every session spawned from now on; the returned function stops that (sessions already watched keep their listener). */
  addObserver(observer: TerminalSessionObserver): () => void {
    if (this.#disposing) throw refuse.disposing()
    if (!observer || typeof observer.sessionStarting !== 'function') throw refuse.invalid('a session observer needs a sessionStarting function')
    // A wrapper per registration, so registering the same object twice is two registrations.
    const entry: TerminalSessionObserver = { sessionStarting: (start) => observer.sessionStarting(start) }
    this.#observers.add(entry)
    return () => {
      this.#observers.delete(entry)
    }
  }

  /** Reserve synchronously, run backend setup, then publish or roll back. */
  async spawn(owner: Agent, request: TerminalSpawnRequest, signal?: AbortSignal): Promise<TerminalSpawnResult> {
    // Durable compositions only: the first spawns wait for the first look at other processes' detached ids.
    const scanning = this.#elsewhere.scanning
    if (scanning) await scanning
    return this.#run(this.#reserveSpawn(owner, request, signal), request, signal, {})
  }

  async #run(
    reserved: ReservedSpawn,
    request: TerminalSpawnRequest,
    signal: AbortSignal | undefined,
    options: { resume?: boolean },
  ): Promise<TerminalSpawnResult> {
    const { backend, pending, state } = reserved
    const listeners = this.#observers.size === 0 ? undefined : SessionListeners.forSpawn(this.#observers, startOf(pending, request.type))
    const detachedTtlMs = this.#detachedTtlMs > 0 ? this.#detachedTtlMs : undefined
    try {
      return await runSpawn(this.#spawnRegistry, backend, pending, request, signal, listeners, { ...options, ...(detachedTtlMs ? { detachedTtlMs } : {}) })
    } finally {
      state.pending.delete(pending)
      pending.settle()
      this.#forgetIfDone(state)
    }
  }

  /** Published sessions, unpublished spawns or unreported cleanup failures of this exact owner. */
  hasOwnerActivity(owner: Agent): boolean {
    return this.#owners.get(owner)?.hasActivity() ?? false
  }

  /** Reserve the session and start one send before returning. */
  startSend(owner: Agent, id: TerminalSessionId, request: TerminalSendRequest): TerminalSendHandle {
    const record = this.#resolve(owner, id)
    const handle = record.startSend(checkSendRequest(request, this.#maxTextBytes))
    if (!record.session.lost) return handle
    // A send the session host's death ended (or whose write it refused) is that loss, not a shell exit.
    const lostOr = <T>(outcome: () => T): T => {
      if (this.#isLost(record)) throw refuse.hostLost(id)
      return outcome()
    }
    const done = handle.done.then(
      (result) => lostOr(() => result),
      (error: unknown) =>
        lostOr(() => {
          throw error
        }),
    )
    return { ...handle, done }
  }

  /** Read one page of an owned session's scrollback: back from the newest line, or forward from `fromLine`. */
  read(owner: Agent, id: TerminalSessionId, request: TerminalReadRequest = {}): TerminalReadResult {
    const record = this.#resolve(owner, id)
    checkReadRequest(request)
    return record.session.read(request ?? {})
  }

  /**
   * What an owned session's terminal shows now, rendered by its emulator; `undefined` when closing or
   * when the backend keeps no screen (then only its lines can be read).
   */
  async screen(owner: Agent, id: TerminalSessionId): Promise<TerminalScreen | undefined> {
    const record = this.#resolve(owner, id)
    if (record.closing || !record.session.screen) return undefined
    return await record.session.screen()
  }

  /** What an owned session's terminal waits for now; `undefined` when closing or the backend cannot tell. */
  async inputState(owner: Agent, id: TerminalSessionId): Promise<TerminalInputState | undefined> {
    // Detached sessions too: terminal_list shows what each waits for before one is resumed; one another
    // process detached is told by what that process last knew (its last settled send).
    this.#assertOwner(owner)
    if (typeof id === 'string' && !this.#sessions.has(id) && !this.#resuming.has(id)) {
      const known = this.#elsewhere.inputOf(id)
      if (known) return known
    }
    const record = this.#resolve(owner, id, true)
    if (record.closing || !record.session.inputState) return undefined
    return await record.session.inputState()
  }

  /** Open a person's view of an owned session, for the host acting for its owner. */
  async observeAsHuman(
    owner: Agent,
    id: TerminalSessionId,
    observer: TerminalHumanObserver,
    options: TerminalHumanViewOptions = {},
  ): Promise<TerminalHumanView> {
    const record = this.#resolve(owner, id)
    if (!observer || typeof observer.onOutput !== 'function' || typeof observer.onEnd !== 'function') {
      throw refuse.invalid('a human observer needs onOutput and onEnd functions')
    }
    const client = options?.client
    if (client !== undefined && !isClientName(client)) {
      throw refuse.invalid(`a human view's client must be 1 to ${MAX_HUMAN_CLIENT_LENGTH} printable characters (e.g. "the web view in a browser")`)
    }
    return await record.observe(observer, client)
  }

  /** Who is attached to an owned session and what the one who took over does; `undefined` while nobody is. */
  humans(owner: Agent, id: TerminalSessionId): TerminalHumanSummary | undefined {
    return this.#resolve(owner, id).human.summary()
  }

  /** Deliver an allowed signal through an owned session that is not closing. */
  async signal(owner: Agent, id: TerminalSessionId, signal: TerminalSignal): Promise<TerminalSignalResult> {
    const record = this.#resolve(owner, id)
    if (!isTerminalSignal(signal)) throw refuse.invalid(`PTY signal must be one of ${TERMINAL_SIGNALS.join(', ')}`)
    if (record.closing) throw refuse.closing(id)
    return await record.session.signal(signal)
  }

  /** Close an owned session; false when joining a close already in flight. */
  async close(owner: Agent, id: TerminalSessionId, reason = 'model request'): Promise<boolean> {
    const record = this.#resolve(owner, id)
    const { promise, joined } = record.close(String(reason))
    await promise
    return !joined
  }

  /** Snapshots of this owner's sessions in publication order, then every detached session (marked `detachedAt`). */
  list(owner: Agent): TerminalSessionSnapshot[] {
    this.#assertOwner(owner)
    this.#dropLost()
    const state = this.#owners.get(owner)
    const shown = (record: SessionRecord) => !record.closing || record.session.lost?.() !== true
    const own = state ? [...state.records.values()].filter(shown).map((record) => record.snapshot()) : []
    if (this.#detachedTtlMs === 0) return own
    const detached = [...this.#sessions.values()].filter((record) => record.detachedAt !== undefined && shown(record))
    return [...own, ...detached.map((record) => record.snapshot())]
  }

  /**
   * Adopt a detached session for `owner`. The claim is synchronous (a second caller gets
   * `SESSION_ADOPTED`); the promise settles once a send released at detachment let go of the session.
   */
  resume(owner: Agent, id: TerminalSessionId, type: string): Promise<TerminalSessionSnapshot> {
    this.#assertOwner(owner)
    if (typeof id !== 'string' || id === '') throw refuse.invalid('PTY resume needs the id of a detached session')
    const record = this.#sessions.get(id)
    if (record && this.#isLost(record)) throw refuse.hostLost(id)
    if (!record) {
      if (this.#lost.concerns(id, owner)) throw refuse.hostLost(id)
      if (!this.#backends.get(type)?.resume || this.#detachedTtlMs === 0) throw refuse.notDetached(id, false)
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
    let state = this.#owners.get(owner)
    if (record.name !== undefined && state?.nameTaken(record.name)) throw refuse.duplicateName(record.name)
    if (state && state.sessions() >= this.#maxSessions) throw refuse.sessionLimit(owner, this.#maxSessions)
    state ??= this.#adopt(owner)
    this.#detached.take(record.id)
    const released = record.adopt(owner)
    state.records.set(record.id, record)
    return released.then(() => record.snapshot())
  }

  /** The detached sessions other host processes left (their backends' `listDetached`), for `list`'s callers to add. */
  async listElsewhere(owner: Agent): Promise<TerminalSessionSnapshot[]> {
    this.#assertOwner(owner)
    if (this.#detachedTtlMs === 0) return []
    const backends = this.#backends.types().flatMap((type) => this.#backends.get(type) ?? [])
    return this.#elsewhere.list(backends, (id) => this.#sessions.has(id) || this.#resuming.has(id))
  }

  /** The subprocess targets the last `listElsewhere` could not ask, so its caller can say whose sessions are missing. */
  unreachableTargets(): TerminalUnreachableTarget[] {
    return this.#elsewhere.unreachable()
  }

  /** Adopt a session another host process detached (checked by `resume`): the backend rebuilds it, published under its id. */
  async #resumeElsewhere(owner: Agent, id: TerminalSessionId, type: string): Promise<TerminalSessionSnapshot> {
    // Taken at once, so a second resume of the id is SESSION_ADOPTED while this one looks and adopts.
    this.#resuming.add(id)
    try {
      // A look now: an earlier one may predate this session's detachment (its host had not hung up yet).
      const backend = this.#backends.get(type)
      if (backend) await this.#elsewhere.list([backend], () => false)
      // It keeps its name unless the adopter already uses that name for a session of its own.
      const name = this.#elsewhere.nameOf(id)
      const keepName = name !== undefined && !this.#owners.get(owner)?.nameTaken(name)
      const target = this.#elsewhere.targetOf(id)
      const request: TerminalSpawnRequest = { type, ...(keepName ? { name } : {}), ...(target === undefined ? {} : { target }) }
      const reserved = this.#reserveSpawn(owner, request, undefined, id)
      const { motd: _motd, ...snapshot } = await this.#run(reserved, request, undefined, { resume: true })
      return snapshot
    } finally {
      this.#resuming.delete(id)
    }
  }

  /**
   * Abort every pending spawn, close every session, always clear the registries, and reject with
   * every failure together. Idempotent.
   */
  dispose(): Promise<void> {
    this.#disposing = true
    this.#disposal ??= this.#disposeAll()
    return this.#disposal
  }

  #assertOwner(owner: Agent): void {
    if (this.#disposing) throw refuse.disposing()
    if (!this.#ownerLive(owner)) throw refuse.ownerNotLive(owner)
  }

  #ownerLive(owner: Agent): boolean {
    if (!owner || typeof owner !== 'object') return false
    return this.#isLive(owner) && !this.#owners.get(owner)?.disposed
  }

  /** The common guard of every session operation: disposal, owner, id, existence, ownership (or, with `detached`, detachment). */
  #resolve(owner: Agent, id: TerminalSessionId, detached = false): SessionRecord {
    this.#assertOwner(owner)
    if (typeof id !== 'string' || id === '') throw refuse.invalid('PTY session id must be a non-empty string')
    const record = this.#sessions.get(id)
    if (!record) {
      if (this.#lost.concerns(id, owner)) throw refuse.hostLost(id)
      throw refuse.noSession(id, this.#idNamed(owner, id))
    }
    if ((record.owner === owner || record.detachedAt !== undefined) && this.#isLost(record)) throw refuse.hostLost(id)
    if (record.detachedAt !== undefined) {
      if (detached) return record
      throw refuse.detached(id)
    }
    if (record.owner !== owner) throw refuse.foreign(id)
    return record
  }

  /**
   * Whether `record`'s session host died under it; if so it is dropped now (remembered as lost, out
   * of every table once its close, which has no process left to end, succeeded).
   */
  #isLost(record: SessionRecord): boolean {
    if (record.session.lost?.() !== true) return false
    if (!record.closing) {
      this.#lost.add(record.id, record.detachedAt === undefined ? record.owner : undefined)
      this.#detached.take(record.id)
      record.close(SESSION_HOST_LOST_REASON).promise.catch((error: unknown) => this.#expiryFailures.push(error))
    }
    return true
  }

  /** Drop every session whose session host died, so `list` shows none of them. */
  #dropLost(): void {
    for (const record of [...this.#sessions.values()]) this.#isLost(record)
  }

  /** The id of the owner's session named `name`: a caller that passed a name where an id belongs is told the id. */
  #idNamed(owner: Agent, name: string): TerminalSessionId | undefined {
    for (const record of this.#sessions.values()) if (record.owner === owner && record.name === name) return record.id
    return undefined
  }

  /** Spawn steps up to the backend call, all synchronous so no other call can interleave. */
  #reserveSpawn(owner: Agent, request: TerminalSpawnRequest, signal: AbortSignal | undefined, resumeId?: TerminalSessionId): ReservedSpawn {
    if (this.#disposing) throw refuse.disposing()
    if (signal?.aborted) throw signal.reason
    if (!this.#ownerLive(owner)) throw refuse.ownerNotLive(owner)
    if (!request || typeof request.type !== 'string') throw refuse.invalid('PTY spawn request needs a backend type')
    if (request.size !== undefined) checkSize(request.size, 'PTY spawn size')
    const backend = this.#backends.get(request.type)
    if (!backend) throw refuse.noBackend(request.type)
    const { name, cwd } = request
    if (name !== undefined) {
      const problem = typeof name === 'string' ? sessionNameProblem(name) : 'PTY session name must be a non-empty string'
      if (problem) throw refuse.invalid(problem)
    }
    if (cwd !== undefined && typeof cwd !== 'string') throw refuse.invalid('PTY session cwd must be a string')
    if (request.target !== undefined && (typeof request.target !== 'string' || request.target === '')) {
      throw refuse.invalid('PTY session target must be a non-empty string: the name of a target of the subprocess entry')
    }
    let state = this.#owners.get(owner)
    if (name !== undefined && state?.nameTaken(name)) throw refuse.duplicateName(name)
    // Spawns in flight count, so concurrent opens cannot overshoot; a session counts until its close succeeded.
    if (state && state.sessions() >= this.#maxSessions) throw refuse.sessionLimit(owner, this.#maxSessions)
    state ??= this.#adopt(owner)
    const pending = new PendingSpawn(resumeId ?? this.#mintId(), owner, name)
    state.pending.add(pending)
    return { backend, pending, state }
  }

  /** The next `pty-<n>` that no session here and no detached terminal of another process holds. */
  #mintId(): TerminalSessionId {
    let id: string
    do id = `pty-${++this.#counter}`
    while (this.#sessions.has(id as TerminalSessionId) || this.#elsewhere.taken(id))
    return id as TerminalSessionId
  }

  /** Start tracking an owner: one cleanup hook on its scope for its whole tracked life. */
  #adopt(owner: Agent): OwnerState {
    const state = new OwnerState(owner)
    try {
      state.attach(() => this.#disposeOwner(state))
    } catch {
      throw refuse.ownerNotLive(owner)
    }
    this.#owners.set(owner, state)
    return state
  }

  readonly #spawnRegistry: SpawnRegistry = {
    refusal: (pending) => {
      if (pending.signal.aborted) return { error: pending.signal.reason }
      if (this.#disposing) return { error: refuse.disposing() }
      if (!this.#ownerLive(pending.owner)) return { error: refuse.ownerNotLive(pending.owner) }
      return undefined
    },
    publish: (pending, type, session, listeners) => this.#publish(pending, type, session, listeners),
    retain: (pending, failure) => {
      this.#owners.get(pending.owner)?.failures.push(failure)
    },
  }

  #publish(pending: PendingSpawn, type: string, session: TerminalBackendSession, listeners: SessionListeners | undefined): TerminalSpawnResult {
    const identity = { id: pending.id, owner: pending.owner, name: pending.name, type }
    const record = new SessionRecord(identity, session, (closed) => this.#remove(closed), this.#humanActiveMs, listeners)
    this.#sessions.set(record.id, record)
    this.#owners.get(pending.owner)?.records.set(record.id, record)
    if (listeners) listeners.published(publishedFacts(session))
    return { ...record.snapshot(), motd: session.motd }
  }

  /** Forget a record after its close succeeded (only if the tables still name this record). */
  #remove(record: SessionRecord): void {
    this.#detached.take(record.id)
    if (this.#sessions.get(record.id) === record) this.#sessions.delete(record.id)
    const state = this.#owners.get(record.owner)
    if (!state) return
    if (state.records.get(record.id) === record) state.records.delete(record.id)
    this.#forgetIfDone(state)
  }

  /** Drop a disposed owner's state once nothing of it is left to close or report. */
  #forgetIfDone(state: OwnerState): void {
    if (state.disposed && !state.hasActivity() && this.#owners.get(state.owner) === state) {
      this.#owners.delete(state.owner)
    }
  }

  /** The owner's hook: abort and await its spawns, then close its sessions; report failures. */
  async #disposeOwner(state: OwnerState): Promise<void> {
    state.disposed = true
    this.#lost.forgetOwner(state.owner)
    const pending = [...state.pending]
    for (const spawn of pending) spawn.abort(refuse.ownerNotLive(state.owner))
    await Promise.all(pending.map((spawn) => spawn.settled))
    if (this.#detachedTtlMs > 0) this.#detachAll(state)
    const closes = [...state.records.values()].map((record) => record.close(OWNER_DISPOSED_REASON).promise)
    const failures = [...state.failures.splice(0), ...rejections(await Promise.allSettled(closes))]
    this.#forgetIfDone(state)
    if (failures.length) throw combineFailures(failures, `PTY cleanup of agent ${state.owner.id} failed`)
  }

  /** Keep an ended owner's sessions, detached (those already closing finish closing). */
  #detachAll(state: OwnerState): void {
    for (const record of [...state.records.values()]) {
      if (record.closing || this.#disposing) continue
      state.records.delete(record.id)
      this.#detached.add(record)
    }
  }

  async #disposeAll(): Promise<void> {
    const failures: unknown[] = []
    this.#detached.clear()
    try {
      const pending = [...this.#owners.values()].flatMap((state) => [...state.pending])
      for (const spawn of pending) spawn.abort(refuse.disposing())
      await Promise.all(pending.map((spawn) => spawn.settled))
      // A detached session whose terminal outlives this process is left to it (its session host keeps
      // it for another host process to resume); every other session is closed.
      const closes = [...this.#sessions.values()].map((record) =>
        record.detachedAt !== undefined && record.session.leave?.() === true ? Promise.resolve() : record.close(SERVICE_DISPOSED_REASON).promise,
      )
      const closeFailures = rejections(await Promise.allSettled(closes))
      for (const state of this.#owners.values()) failures.push(...state.failures.splice(0))
      failures.push(...this.#expiryFailures.splice(0), ...closeFailures)
    } finally {
      for (const state of this.#owners.values()) state.detach()
      this.#owners.clear()
      this.#sessions.clear()
      this.#backends.clear()
    }
    if (failures.length) throw combineFailures(failures, 'PTY service disposal failed')
  }
}

/** A spawn reserved for its owner: the backend that runs it, its pending entry and the owner's state. */
interface ReservedSpawn {
  backend: TerminalBackend
  pending: PendingSpawn
  state: OwnerState
}

/** What observers learn of a session once it is published. */
function publishedFacts(session: TerminalBackendSession): TerminalSessionPublished {
  const size = session.size && { rows: session.size.rows, cols: session.size.cols }
  return { ...(size ? { size } : {}), ...(typeof session.term === 'string' ? { term: session.term } : {}) }
}

/** What observers learn of a spawn as it begins. */
function startOf(pending: PendingSpawn, type: string): TerminalSessionStart {
  const start = { sessionId: pending.id, ownerId: pending.owner.id, type, startedAt: Date.now() }
  return pending.name === undefined ? start : { ...start, name: pending.name }
}

function rejections(results: PromiseSettledResult<unknown>[]): unknown[] {
  return results.flatMap((result) => (result.status === 'rejected' ? [result.reason] : []))
}
