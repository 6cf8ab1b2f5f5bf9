import type { TerminalBackendSession } from './backend'
import type { TerminalInputState } from './input-state'
import type { PendingSpawn } from './pending-spawn'
import type { TerminalSize } from './screen'
import type { TerminalSendResult, TerminalSessionId } from './types'

/** A session about to start, as an observer first learns of it: before its first byte of output. */
export interface TerminalSessionStart {
  /** The id minted for it (a spawn that fails still used it up). */
  readonly sessionId: TerminalSessionId
  /** The owning agent's id. */
  readonly ownerId: string
  /** Backend type (`shell`). */
  readonly type: string
  /** Display name, when the opener gave one. */
  readonly name?: string
  /** Wall-clock start of the spawn, in milliseconds since the epoch. */
  readonly startedAt: number
}

/** A session as observers learn of it once it is published. */
export interface TerminalSessionPublished {
  /** Its window size (absent: the backend has no terminal). */
  readonly size?: TerminalSize
  /** The terminal type its programs were told (`TERM`), when the backend says. */
  readonly term?: string
}

/** One send as observers see it when it starts: what was asked, never what it printed. */
export interface TerminalSendStart {
  /** 1-based number of this send within its session. */
  readonly number: number
  /** The id of the tool call that asked for it, when the caller gave one. */
  readonly callId?: string
  /** The text typed (empty for a key press or a wait). */
  readonly text: string
  /** Whether Enter follows the text. */
  readonly submit: boolean
  /** Keys pressed instead of text. */
  readonly keys?: readonly string[]
  /** The window size the send resizes to first. */
  readonly size?: TerminalSize
  /**
   * What the terminal waited for when the session's previous send settled (e.g. `password`: this
   * send's text answers a secret prompt); absent when no send settled yet or it was not told.
   */
  readonly inputBefore?: TerminalInputState
}

/**
 * What one observer hears of one session, in order. Calls are synchronous on the session's own path
 * (output arrives as the PTY delivers it), so a listener must be cheap and must not block: buffer,
 * then work asynchronously. A listener that throws is dropped for the rest of the session.
 */
export interface TerminalSessionListener {
  /** Startup settled and the session was published. */
  published?(session: TerminalSessionPublished): void
  /** Raw output as the terminal printed it, from the first byte on, nothing left out. */
  output?(bytes: Uint8Array): void
  /** A send starts (called before any of its input is written). */
  sendStarted?(send: TerminalSendStart): void
  /** That send settled with `result`, or failed (`undefined`). */
  sendSettled?(send: TerminalSendStart, result: TerminalSendResult | undefined): void
  /** A person attached to the session typed into it; what they typed is never given. */
  personTyped?(): void
  /** The session is gone (closed, or its spawn failed): the last call. */
  ended?(reason: string): void
}

/**
 * Watches sessions as they start (a recorder, an auditor): registered with
 * `ctx.terminals.observeSessions`, asked once per spawn for a listener of that session.
 */
export interface TerminalSessionObserver {
  /** A spawn begins: return a listener for this session, or `undefined` to leave it alone. */
  sessionStarting(start: TerminalSessionStart): TerminalSessionListener | undefined
}

/**
 * The listeners of one session and the fan-out to them. A listener that throws is dropped (its
 * observer's problem, never the session's); `ended` is the last call any of them gets.
 */
export class SessionListeners {
  readonly #listeners: TerminalSessionListener[]
  #ended = false

  private constructor(listeners: TerminalSessionListener[]) {
    this.#listeners = listeners
  }

  /** Ask every observer for a listener of `start`; `undefined` when none wants it. */
  static forSpawn(observers: Iterable<TerminalSessionObserver>, start: TerminalSessionStart): SessionListeners | undefined {
    const listeners: TerminalSessionListener[] = []
    for (const observer of observers) {
      try {
        const listener = observer.sessionStarting(start)
        if (listener) listeners.push(listener)
      } catch {
        // An observer that cannot start watching leaves this session alone; the spawn goes on.
      }
    }
    return listeners.length > 0 ? new SessionListeners(listeners) : undefined
  }

  /** True when some listener takes raw output (the backend then hands it over). */
  get wantsOutput(): boolean {
    return this.#listeners.some((listener) => listener.output !== undefined)
  }

  /** See {@link TerminalSessionListener.published}. */
  published(session: TerminalSessionPublished): void {
    this.#each((listener) => listener.published?.(session))
  }

  /** See {@link TerminalSessionListener.output}. */
  output(bytes: Uint8Array): void {
    this.#each((listener) => listener.output?.(bytes))
  }

  /** See {@link TerminalSessionListener.sendStarted}. */
  sendStarted(send: TerminalSendStart): void {
    this.#each((listener) => listener.sendStarted?.(send))
  }

  /** See {@link TerminalSessionListener.sendSettled}. */
  sendSettled(send: TerminalSendStart, result: TerminalSendResult | undefined): void {
    this.#each((listener) => listener.sendSettled?.(send, result))
  }

  /** See {@link TerminalSessionListener.personTyped}. */
  personTyped(): void {
    this.#each((listener) => listener.personTyped?.())
  }

  /** See {@link TerminalSessionListener.ended}; later calls of any kind are ignored. */
  ended(reason: string): void {
    if (this.#ended) return
    this.#each((listener) => listener.ended?.(reason))
    this.#ended = true
    this.#listeners.length = 0
  }

  #each(call: (listener: TerminalSessionListener) => void): void {
    if (this.#ended) return
    for (let index = 0; index < this.#listeners.length; index++) {
      const listener = this.#listeners[index]!
      try {
        call(listener)
      } catch {
        this.#listeners.splice(index--, 1)
      }
    }
  }
}

/** What observers learn of a session once it is published. */
export function publishedFacts(session: TerminalBackendSession): TerminalSessionPublished {
  const size = session.size && { rows: session.size.rows, cols: session.size.cols }
  return { ...(size ? { size } : {}), ...(typeof session.term === 'string' ? { term: session.term } : {}) }
}

/** What observers learn of a spawn as it begins. */
export function spawnStartOf(pending: PendingSpawn, type: string): TerminalSessionStart {
  const start = { sessionId: pending.id, ownerId: pending.owner.id, type, startedAt: Date.now() }
  return pending.name === undefined ? start : { ...start, name: pending.name }
}
