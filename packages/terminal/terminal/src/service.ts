import { type Context, Service } from '@deepseek-ai/cordis'
import { type Agent, directCalls } from 'dsh-agent'
import type { TerminalBackend, TerminalUnreachableTarget } from './backend'
import { Config, type TerminalConfig } from './config'
import type { TerminalHumanObserver, TerminalHumanSummary, TerminalHumanView, TerminalHumanViewOptions } from './human'
import type { TerminalInputState } from './input-state'
import type { TerminalScreen } from './screen'
import { TerminalRegistry } from './registry'
import type { TerminalSessionObserver } from './session-observers'
import type {
  TerminalReadRequest,
  TerminalReadResult,
  TerminalSendHandle,
  TerminalSendRequest,
  TerminalSessionId,
  TerminalSessionSnapshot,
  TerminalSignal,
  TerminalSignalResult,
  TerminalSpawnRequest,
  TerminalSpawnResult,
} from './types'

declare module '@deepseek-ai/cordis' {
  interface Context {
    /** Owner-scoped persistent terminal sessions (plugin `dsh-terminal`). */
    terminals: TerminalSessionService
  }
}

/**
 * `ctx.terminals`: the in-process registry of backends and exact-Agent sessions. Sessions live here,
 * not in their backend's plugin, so a backend or tool reload never orphans them.
 */
export class TerminalSessionService extends Service {
  /** Owner liveness is `ctx.agents.liveness()`: the exact registered Agent object. */
  static readonly inject = ['agents']

  // State lives in a plain object: Service instances are proxied, so no `#private` here.
  private readonly registry: TerminalRegistry
  /** Whether an ended owner's sessions are kept, detached (`detachedTtlMs` > 0): work on them (a background job) may outlive it too. */
  readonly keepsDetached: boolean

  /** `config` is the plugin's; omitted or partial, the documented defaults apply. */
  constructor(ctx: Context, config: Partial<TerminalConfig> = {}) {
    super(ctx, 'terminals')
    // Every send passes through here: no shadow context per call (`this.ctx` stays the caller's).
    directCalls(this)
    const isLive = ctx.agents.liveness()
    const { maxSessionsPerAgent, maxTextBytes, humanActiveMs, detachedTtlMs } = Config.parse(config)
    this.keepsDetached = detachedTtlMs > 0
    this.registry = new TerminalRegistry({ isLive, maxSessionsPerAgent, maxTextBytes, humanActiveMs, detachedTtlMs })
    ctx.effect(() => () => this.registry.dispose(), 'terminals: close every session')
  }

  /**
   * Register a backend for its type, owned by the calling plugin: it is removed when that plugin
   * unloads, or by the returned disposer, which never removes a later replacement.
   */
  registerBackend(backend: TerminalBackend): () => void {
    // Called through `ctx.terminals`, `this.ctx` is the caller's context, so the effect is theirs.
    const dispose = this.ctx.effect(() => this.registry.addBackend(backend), `terminals: backend ${String(backend?.type)}`)
    return () => {
      void dispose()
    }
  }

  /** Registered backend types in registration order. */
  listBackends(): string[] {
    return this.registry.listBackends()
  }

  /**
   * Watch every session spawned from now on (a recorder, an auditor): the observer is asked for a
   * listener per spawn, which hears its raw output, sends, a person typing and its end. Owned by the
   * calling plugin: it stops when that plugin unloads, or by the returned disposer. Sessions already
   * watched keep their listener until they end.
   */
  observeSessions(observer: TerminalSessionObserver): () => void {
    const dispose = this.ctx.effect(() => this.registry.addObserver(observer), 'terminals: session observer')
    return () => {
      void dispose()
    }
  }

  /**
   * Create and publish a session owned by the exact `owner`. `signal` cancels unpublished setup;
   * a cancelled spawn rejects with exactly `signal.reason`.
   */
  spawn(owner: Agent, request: TerminalSpawnRequest, signal?: AbortSignal): Promise<TerminalSpawnResult> {
    return this.registry.spawn(owner, request, signal)
  }

  /** True while `owner` has a pending spawn, a session not yet closed, or an unreported cleanup failure. */
  hasOwnerActivity(owner: Agent): boolean {
    return this.registry.hasOwnerActivity(owner)
  }

  /**
   * Start the session's single send. The reservation is taken before this returns and is held until
   * `done` and the backend's `released` settle; meanwhile another send is `SEND_ACTIVE`.
   */
  startSend(owner: Agent, id: TerminalSessionId, request: TerminalSendRequest): TerminalSendHandle {
    return this.registry.startSend(owner, id, request)
  }

  /**
   * Read one bounded page of retained scrollback: back from the newest line (`offset`) or forward from
   * an absolute line (`fromLine`); lines are numbered from 1, the session's first, across eviction.
   */
  read(owner: Agent, id: TerminalSessionId, request: TerminalReadRequest = {}): TerminalReadResult {
    return this.registry.read(owner, id, request)
  }

  /** What an owned session's terminal shows now (its emulator's screen); `undefined` when the backend keeps none or the session is closing. */
  screen(owner: Agent, id: TerminalSessionId): Promise<TerminalScreen | undefined> {
    return this.registry.screen(owner, id)
  }

  /**
   * What the session's terminal waits for now (prompt, continuation, password, program, keys) or
   * what runs in front; `undefined` when the session is closing or its backend cannot tell.
   */
  inputState(owner: Agent, id: TerminalSessionId): Promise<TerminalInputState | undefined> {
    return this.registry.inputState(owner, id)
  }

  /**
   * Let a person watch an owned session, for a host acting for its owner (`dsh-terminal attach`, the
   * web view): the rendered screen, then its live output; typing needs the view's writer role and
   * holds the agent's sends off for `humanActiveMs`. `NOT_WATCHABLE` when the backend has no tap.
   * `options.client` names where the person is, so the agent's `HUMAN_ACTIVE` points there.
   */
  observeAsHuman(owner: Agent, id: TerminalSessionId, observer: TerminalHumanObserver, options?: TerminalHumanViewOptions): Promise<TerminalHumanView> {
    return this.registry.observeAsHuman(owner, id, observer, options)
  }

  /**
   * How many people watch an owned session and whether the one who took over is typing, for a host
   * listing sessions to a person (agents get the one-word `human` of snapshots and results).
   */
  humans(owner: Agent, id: TerminalSessionId): TerminalHumanSummary | undefined {
    return this.registry.humans(owner, id)
  }

  /** Deliver an allowed signal to the session's foreground process group. */
  signal(owner: Agent, id: TerminalSessionId, signal: TerminalSignal): Promise<TerminalSignalResult> {
    return this.registry.signal(owner, id, signal)
  }

  /**
   * Close a session and forget it once the backend reports quiescence. Resolves false when it joined a
   * close already in flight; rejects (and stays retriable) when the close failed.
   */
  close(owner: Agent, id: TerminalSessionId, reason = 'model request'): Promise<boolean> {
    return this.registry.close(owner, id, reason)
  }

  /** Snapshots of the owner's sessions in publication order, then the detached sessions any owner may resume (`detachedAt` set). */
  list(owner: Agent): TerminalSessionSnapshot[] {
    return this.registry.list(owner)
  }

  /**
   * Adopt a detached session (its agent ended while `detachedTtlMs` kept it): it becomes `owner`'s.
   * The first caller wins synchronously, a later one gets `SESSION_ADOPTED`; an id that is not
   * detached is `NO_SESSION`. Resolves once a send released at detachment let go of the session; the
   * next send's earlier output is what the session printed since its last delivered result.
   */
  resume(owner: Agent, id: TerminalSessionId, type: string): Promise<TerminalSessionSnapshot> {
    return this.registry.resume(owner, id, type)
  }

  /**
   * Sessions other host processes detached (the backends' `listDetached`, e.g. through a session
   * host), marked `detachedAt`, for a caller of {@link TerminalSessionService.list} to add: `resume`
   * adopts them too. Empty unless `detachedTtlMs` > 0.
   */
  listElsewhere(owner: Agent): Promise<TerminalSessionSnapshot[]> {
    return this.registry.listElsewhere(owner)
  }

  /**
   * The subprocess targets (machines) the last {@link TerminalSessionService.listElsewhere} could not
   * ask in time, with why: their detached sessions are missing from it. Empty when every one answered.
   */
  unreachableTargets(): TerminalUnreachableTarget[] {
    return this.registry.unreachableTargets()
  }
}
