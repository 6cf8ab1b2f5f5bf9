import { type Context, Service } from '@deepseek-ai/cordis'
import type { Agent } from 'dsh-agent'
import { isSandboxMode, type SandboxMode } from 'dsh-sandbox'
import type { SandboxPolicyConfig } from './config'
import { resolveSandboxCwd } from './cwd'
import { SandboxPolicyError } from './errors'
import type { ModeChange, ModeChangeListener, OwnerListenerOptions, ResolvedSandboxPolicy } from './types'
import { errorMessage } from 'dsh-basics'

declare module '@deepseek-ai/cordis' {
  interface Context {
    /** Deployment and per-owner sandbox modes (plugin `dsh-sandbox-policy`). */
    sandboxPolicy: SandboxPolicyService
  }
}

/** What the policy remembers about one owner, until the owner ends. */
interface OwnerRecord {
  mode: SandboxMode | undefined
  listeners: Map<string | symbol, ModeChangeListener>
  forget: () => Promise<void>
}

/**
 * `ctx.sandboxPolicy`: the deployment's default mode and workspace root, plus a session mode per
 * owner. Changes of an owner's effective mode are shown to listeners first, and any of them can
 * veto; check and commit happen in one synchronous step, so nothing can start in between.
 */
export class SandboxPolicyService extends Service {
  private readonly config: SandboxPolicyConfig
  private readonly owners = new Map<Agent, OwnerRecord>()
  private readonly listeners = new Map<symbol, ModeChangeListener>()

  constructor(ctx: Context, config: SandboxPolicyConfig) {
    super(ctx, 'sandboxPolicy')
    this.config = config
    ctx.effect(
      () => () => {
        const records = [...this.owners.values()]
        this.owners.clear()
        this.listeners.clear()
        return Promise.all(records.map((record) => record.forget())).then(() => undefined)
      },
      'sandboxPolicy: forget every owner',
    )
  }

  /** The deployment default mode (config `mode`). */
  get defaultMode(): SandboxMode {
    return this.config.mode
  }

  /** The canonical workspace root (config `workspaceRoot`). */
  get workspaceRoot(): string {
    return this.config.workspaceRoot
  }

  /** The owner's own session mode, or undefined when it follows the deployment default. */
  sessionMode(owner: Agent): SandboxMode | undefined {
    return this.owners.get(owner)?.mode
  }

  /**
   * The policy a process of `owner` starts with: its session mode over the deployment default.
   * Resolve once at spawn; a non-live owner is refused so an ending owner cannot fall back to the default.
   */
  resolve(owner: Agent): ResolvedSandboxPolicy {
    this.assertLive(owner)
    const policy: ResolvedSandboxPolicy = { mode: this.effectiveMode(owner), workspaceRoot: this.config.workspaceRoot }
    if (this.config.network !== undefined) policy.network = this.config.network
    if (this.config.network === 'allowlist') policy.allowedHosts = [...this.config.allowedHosts]
    return policy
  }

  /**
   * Set (or with `undefined`, clear) the owner's session mode and return the new effective mode.
   * If the effective mode changes, every listener sees the change first and any may veto it
   * (`MODE_CHANGE_VETOED`, nothing committed). A write that keeps the effective mode commits
   * without consulting listeners: no running process's boundary can differ from it.
   */
  setSessionMode(owner: Agent, mode: SandboxMode | undefined): SandboxMode {
    if (mode !== undefined && !isSandboxMode(mode)) {
      throw new SandboxPolicyError('INVALID_MODE', `unknown sandbox mode ${JSON.stringify(mode)}; expected read-only, workspace-write or danger-full-access`)
    }
    this.assertLive(owner)
    const from = this.effectiveMode(owner)
    const to = mode ?? this.config.mode
    if (from !== to) this.consult({ owner, from, to })
    const record = this.owners.get(owner)
    if (record) record.mode = mode
    else if (mode !== undefined) this.track(owner).mode = mode
    return to
  }

  /**
   * Listen to effective mode changes before they are committed; throw to veto. Without options the
   * listener sees every owner and is removed when the registering plugin unloads. With `{owner}`
   * it sees only that owner and lives until the owner ends, independent of the registering plugin:
   * the shape a fence over long-lived sessions needs. Returns a disposer.
   */
  onModeChange(listener: ModeChangeListener, options?: OwnerListenerOptions): () => void {
    if (options?.owner !== undefined) return this.addOwnerListener(listener, options)
    const id = Symbol('mode change listener')
    const dispose = this.ctx.effect(() => {
      this.listeners.set(id, listener)
      return () => {
        this.listeners.delete(id)
      }
    }, 'sandboxPolicy.onModeChange()')
    return () => {
      void dispose()
    }
  }

  /**
   * Canonical working directory for a process under `policy`: the workspace root by default,
   * relative paths resolve against it, and a confined mode refuses one outside it.
   */
  resolveCwd(policy: ResolvedSandboxPolicy, cwd?: string): Promise<string> {
    return resolveSandboxCwd(policy, cwd)
  }

  private effectiveMode(owner: Agent): SandboxMode {
    return this.owners.get(owner)?.mode ?? this.config.mode
  }

  private addOwnerListener(listener: ModeChangeListener, options: OwnerListenerOptions): () => void {
    this.assertLive(options.owner)
    const record = this.track(options.owner)
    const key = options.key ?? Symbol('owner mode change listener')
    record.listeners.set(key, listener)
    return () => {
      if (record.listeners.get(key) === listener) record.listeners.delete(key)
    }
  }

  private consult(change: ModeChange): void {
    const owned = this.owners.get(change.owner)?.listeners.values() ?? []
    for (const listener of [...this.listeners.values(), ...owned]) {
      let result: unknown
      try {
        result = listener(change)
      } catch (error) {
        const reason = errorMessage(error)
        throw new SandboxPolicyError('MODE_CHANGE_VETOED', reason, { cause: error })
      }
      if (isThenable(result)) {
        result.then(undefined, () => {})
        throw new SandboxPolicyError(
          'MODE_CHANGE_VETOED',
          'a mode change listener returned a promise; listeners must decide synchronously, so the change was refused',
        )
      }
    }
  }

  private track(owner: Agent): OwnerRecord {
    const existing = this.owners.get(owner)
    if (existing) return existing
    const record: OwnerRecord = { mode: undefined, listeners: new Map(), forget: async () => {} }
    record.forget = owner.own(() => {
      if (this.owners.get(owner) === record) this.owners.delete(owner)
      record.listeners.clear()
    }, 'sandboxPolicy: forget owner')
    this.owners.set(owner, record)
    return record
  }

  private assertLive(owner: Agent): void {
    if (!owner?.live) {
      throw new SandboxPolicyError('OWNER_NOT_LIVE', `agent ${owner?.id ?? '(none)'} has ended; it has no sandbox policy`)
    }
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | undefined)?.then === 'function'
}
