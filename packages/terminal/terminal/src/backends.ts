import type { TerminalBackend } from './backend'
import { refuse } from './errors'

/** One registration; its identity (not the backend's) decides what a disposer may remove. */
interface Registration {
  readonly backend: TerminalBackend
}

/** The type → backend table. Plain class: it knows nothing about Cordis scopes. */
export class BackendRegistry {
  readonly #entries = new Map<string, Registration>()

  /** Add a backend; the returned remover is idempotent and never removes a later replacement. */
  add(backend: TerminalBackend): () => void {
    if (!backend || typeof backend.spawn !== 'function') throw refuse.invalid('a PTY backend needs a spawn() method')
    const type = backend.type
    if (typeof type !== 'string' || type.trim() === '') throw refuse.invalid('PTY backend type must be a non-empty string')
    if (this.#entries.has(type)) throw refuse.duplicateBackend(type)
    const registration: Registration = { backend }
    this.#entries.set(type, registration)
    return () => {
      if (this.#entries.get(type) === registration) this.#entries.delete(type)
    }
  }

  /** The backend currently registered for `type`. */
  get(type: string): TerminalBackend | undefined {
    return this.#entries.get(type)?.backend
  }

  /** Registered types in registration order. */
  types(): string[] {
    return [...this.#entries.keys()]
  }

  /** Forget every backend (service disposal). */
  clear(): void {
    this.#entries.clear()
  }
}
