import type { Agent } from 'dsh-agent'
import type { TerminalBackend, TerminalBackendSession, TerminalUnreachableTarget } from './backend'
import { BackendRegistry } from './backends'
import { DETACHED_EXPIRED_REASON, DetachedSessions } from './detached'
import { ElsewhereSessions } from './elsewhere'
import { LostSessions, SESSION_HOST_LOST_REASON } from './lost'
import type { TerminalInputState } from './input-state'
import { DEFAULT_MAX_SESSIONS_PER_AGENT, DEFAULT_MAX_TEXT_BYTES } from './config'
import { DEFAULT_HUMAN_ACTIVE_MS, type TerminalHumanObserver, type TerminalHumanSummary, type TerminalHumanView, type TerminalHumanViewOptions } from './human'
import { refuse } from './errors'
import type { TerminalScreen } from './screen'
import { checkHumanView, checkReadRequest, checkSendRequest, checkSpawnRequest } from './request-checks'
import { OwnerState } from './owner-state'
import { PendingSpawn } from './pending-spawn'
import { type DisposalTables, disposeAll, disposeOwner } from './registry-disposal'
import { Resumptions } from './registry-resume'
import { SessionRecord } from './session-record'
import { publishedFacts, SessionListeners, spawnStartOf, type TerminalSessionObserver } from './session-observers'
import { runSpawn, type SpawnRegistry } from './spawn'
import {
  isTerminalSignal,
  TERMINAL_SIGNALS,
  type TerminalReadRequest,
  type TerminalReadResult,
  type TerminalSendHandle,
  type TerminalSendResult,
  type TerminalSendRequest,
  type TerminalSessionId,
  type TerminalSessionSnapshot,
  type TerminalSignal,
  type TerminalSignalResult,
  type TerminalSpawnRequest,
  type TerminalSpawnResult,
} from './types'

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
  readonly #resumptions: Resumptions
  readonly #disposal: DisposalTables
  /** Closes of expired detached sessions that failed: service disposal retries them and reports these. */
  readonly #expiryFailures: unknown[] = []
  #counter = 0
  #disposing = false
  #disposed: Promise<void> | undefined

  constructor(options: RegistryOptions) {
    this.#isLive = options.isLive
    this.#maxSessions = options.maxSessionsPerAgent ?? DEFAULT_MAX_SESSIONS_PER_AGENT
    this.#maxTextBytes = options.maxTextBytes ?? DEFAULT_MAX_TEXT_BYTES
    this.#humanActiveMs = options.humanActiveMs ?? DEFAULT_HUMAN_ACTIVE_MS
    this.#detachedTtlMs = options.detachedTtlMs ?? 0
    this.#detached = new DetachedSessions(this.#detachedTtlMs, (record) => {
      record.close(DETACHED_EXPIRED_REASON).promise.catch((error: unknown) => this.#expiryFailures.push(error))
    })
    const tables = { sessions: this.#sessions, owners: this.#owners, backends: this.#backends, detached: this.#detached, lost: this.#lost }
    this.#resumptions = new Resumptions({
      ...tables,
      elsewhere: this.#elsewhere,
      detachedTtlMs: this.#detachedTtlMs,
      maxSessions: this.#maxSessions,
      assertOwner: (owner) => this.#assertOwner(owner),
      isLost: (record) => this.#isLost(record),
      adopt: (owner) => this.#adopt(owner),
      spawnResumed: (owner, request, id) => this.#run(this.#reserveSpawn(owner, request, undefined, id), request, undefined, { resume: true }),
    })
    this.#disposal = {
      ...tables,
      expiryFailures: this.#expiryFailures,
      detachedTtlMs: this.#detachedTtlMs,
      disposing: () => this.#disposing,
      forgetIfDone: (state) => this.#forgetIfDone(state),
    }
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
    const listeners = this.#observers.size === 0 ? undefined : SessionListeners.forSpawn(this.#observers, spawnStartOf(pending, request.type))
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
    return handle.withDone(this.#lostOr(record, id, handle.done))
  }

  /**
   * A send the session host's death ended (or whose write it refused) is that loss, not a shell exit.
   * A method rather than closures per send: every shell session can be lost, so every send pays it.
   */
  async #lostOr(record: SessionRecord, id: TerminalSessionId, done: Promise<TerminalSendResult>): Promise<TerminalSendResult> {
    let result: TerminalSendResult
    try {
      result = await done
    } catch (error) {
      if (this.#isLost(record)) throw refuse.hostLost(id)
      throw error
    }
    if (this.#isLost(record)) throw refuse.hostLost(id)
    return result
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
    if (typeof id === 'string' && !this.#sessions.has(id) && !this.#resumptions.adopting(id)) {
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
    checkHumanView(observer, options)
    return await record.observe(observer, options?.client)
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

  /** Adopt a detached session for `owner` (see {@link Resumptions.resume}). */
  resume(owner: Agent, id: TerminalSessionId, type: string): Promise<TerminalSessionSnapshot> {
    return this.#resumptions.resume(owner, id, type)
  }

  /** The detached sessions other host processes left, for `list`'s callers to add (see {@link Resumptions.listElsewhere}). */
  listElsewhere(owner: Agent): Promise<TerminalSessionSnapshot[]> {
    return this.#resumptions.listElsewhere(owner)
  }

  /** The subprocess targets the last `listElsewhere` could not ask, so its caller can say whose sessions are missing. */
  unreachableTargets(): TerminalUnreachableTarget[] {
    return this.#elsewhere.unreachable()
  }

  /**
   * Abort every pending spawn, close every session, always clear the registries, and reject with
   * every failure together. Idempotent.
   */
  dispose(): Promise<void> {
    this.#disposing = true
    this.#disposed ??= disposeAll(this.#disposal)
    return this.#disposed
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
    const backend = checkSpawnRequest(request, (type) => this.#backends.get(type))
    const { name } = request
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
      state.attach(() => disposeOwner(this.#disposal, state))
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
}

/** A spawn reserved for its owner: the backend that runs it, its pending entry and the owner's state. */
interface ReservedSpawn {
  backend: TerminalBackend
  pending: PendingSpawn
  state: OwnerState
}
