import type { Context, Fiber } from '@deepseek-ai/cordis'
import { errorMessage } from 'dsh-basics'

/** Cleanup owned by an agent; may be async, and its failure is reported by {@link Agent.dispose}. */
export type AgentCleanup = () => void | Promise<void>

/**
 * The owner of sessions and jobs: a stable id plus its own Cordis scope.
 * Ownership is checked by object identity, so a look-alike with the same id is never the owner.
 */
export class Agent {
  readonly #fiber: Fiber
  readonly #failures: unknown[] = []
  #ending: Promise<void> | undefined

  /** Wraps a started child fiber; use `ctx.agents.create()` rather than constructing directly. */
  constructor(
    /** Stable identifier, unique among the agents registered on one `ctx.agents`. */
    readonly id: string,
    fiber: Fiber,
  ) {
    this.#fiber = fiber
  }

  /** The agent's own child context: effects registered here end when the agent ends. */
  get scope(): Context {
    return this.#fiber.ctx
  }

  /** True until {@link Agent.dispose} starts (or the parent scope unloads the agent). */
  get live(): boolean {
    return this.#ending === undefined && this.#fiber.uid !== null
  }

  /**
   * Attach cleanup that runs when the agent ends; returns a disposer that runs it early.
   * Failures are collected and rethrown together by {@link Agent.dispose}.
   */
  own(cleanup: AgentCleanup, label = 'agent cleanup'): () => Promise<void> {
    const dispose = this.scope.effect(
      () => async () => {
        try {
          await cleanup()
        } catch (error) {
          this.#failures.push(error)
        }
      },
      label,
    )
    return async () => {
      await dispose()
    }
  }

  /**
   * End the agent: dispose its scope, await every owned cleanup, and reject with an
   * `AgentDisposeError` listing every cleanup that failed. Idempotent.
   */
  dispose(): Promise<void> {
    this.#ending ??= (async () => {
      await this.#fiber.dispose()
      const failures = this.#failures.splice(0)
      if (failures.length) throw new AgentDisposeError(this.id, failures)
    })()
    return this.#ending
  }
}

/** Thrown by {@link Agent.dispose} when owned cleanup failed; `errors` holds each failure. */
export class AgentDisposeError extends AggregateError {
  /** Stable code for callers that route on errors. */
  readonly code = 'AGENT_CLEANUP_FAILED'

  constructor(
    /** Id of the agent whose cleanup failed. */
    readonly agentId: string,
    errors: unknown[],
  ) {
    super(errors, `agent ${agentId} ended but ${errors.length} cleanup step(s) failed: ${errors.map(errorMessage).join('; ')}`)
    this.name = 'AgentDisposeError'
  }
}
