import type { Agent } from 'dsh-agent'
import type { TerminalSessionId } from './types'

/**
 * An unpublished spawn: it reserves its name, counts as owner activity, and carries the
 * service-owned AbortController that owner or service disposal uses to stop it.
 */
export class PendingSpawn {
  readonly #controller = new AbortController()
  readonly #settled: Promise<void>
  #resolve!: () => void

  constructor(
    /** Id minted for this attempt; consumed even if the spawn fails. */
    readonly id: TerminalSessionId,
    /** The exact owner that asked. */
    readonly owner: Agent,
    /** Reserved display name, if any. */
    readonly name: string | undefined,
  ) {
    this.#settled = new Promise<void>((resolve) => {
      this.#resolve = resolve
    })
  }

  /** The service-owned signal, combined with the caller's before it reaches the backend. */
  get signal(): AbortSignal {
    return this.#controller.signal
  }

  /** Stop the setup for a lifecycle reason; the first reason wins. */
  abort(reason: Error): void {
    this.#controller.abort(reason)
  }

  /** Resolves (never rejects) once the spawn was published or fully rolled back. */
  get settled(): Promise<void> {
    return this.#settled
  }

  /** Mark the attempt finished; called exactly when it stops being owner activity. */
  settle(): void {
    this.#resolve()
  }
}
