import type { TerminalOutputListener } from 'dsh-subprocess'

/** Hooks an {@link OutputChannel} uses to apply back-pressure and report listener bugs. */
export interface OutputChannelOptions {
  /** Bytes held for the first subscriber before `pause` is called. */
  readonly backlogBytes: number
  /** Stop reading the PTY (the program then blocks on its own writes): nobody is listening yet. */
  readonly pause: () => void
  /** Resume reading the PTY. */
  readonly resume: () => void
  /** A listener threw; delivery to the others continues. */
  readonly report: (error: unknown) => void
}

/**
 * Ordered delivery of PTY chunks. Until someone subscribes, chunks are held (up to
 * `backlogBytes`, then the PTY is paused instead of dropping bytes); the first subscriber gets
 * the backlog synchronously, in order, before any later chunk.
 */
export class OutputChannel {
  readonly #options: OutputChannelOptions
  /** Replaced, never changed in place, on (un)subscribe: a delivery iterates the array it started with, without copying per chunk. */
  #listeners: readonly TerminalOutputListener[] = []
  #backlog: Buffer[] | undefined = []
  #backlogSize = 0
  /** Paused because the backlog is full (nobody subscribed yet). */
  #paused = false
  /** Paused on request of a reader downstream (see {@link hold}). */
  #held = false

  constructor(options: OutputChannelOptions) {
    this.#options = options
  }

  /** Deliver one chunk to the listeners, or hold it for the first one. */
  push(chunk: Buffer): void {
    if (this.#backlog) {
      this.#backlog.push(chunk)
      this.#backlogSize += chunk.length
      if (this.#backlogSize >= this.#options.backlogBytes && !this.#paused) {
        this.#paused = true
        if (!this.#held) this.#options.pause()
      }
      return
    }
    for (const listener of this.#listeners) this.#deliver(listener, chunk)
  }

  /** The output held for the first subscriber, read without subscribing (empty once someone did). */
  held(): Buffer {
    return Buffer.concat(this.#backlog ?? [])
  }

  /** Add a listener; the first one receives the backlog before this returns. */
  subscribe(listener: TerminalOutputListener): () => void {
    if (!this.#listeners.includes(listener)) this.#listeners = [...this.#listeners, listener]
    const backlog = this.#backlog
    if (backlog) {
      this.#backlog = undefined
      this.#backlogSize = 0
      for (const chunk of backlog) this.#deliver(listener, chunk)
      if (this.#paused) {
        this.#paused = false
        if (!this.#held) this.#options.resume()
      }
    }
    return () => {
      if (this.#listeners.includes(listener)) this.#listeners = this.#listeners.filter((other) => other !== listener)
    }
  }

  /**
   * Stop reading the PTY for a reader further down that fell behind (a session host's client that
   * did not acknowledge its window); the program then blocks on its own writes. Idempotent.
   */
  hold(): void {
    if (this.#held) return
    this.#held = true
    if (!this.#paused) this.#options.pause()
  }

  /** Undo {@link hold}: reading resumes unless the backlog still waits for its first subscriber. */
  release(): void {
    if (!this.#held) return
    this.#held = false
    if (!this.#paused) this.#options.resume()
  }

  #deliver(listener: TerminalOutputListener, chunk: Buffer): void {
    try {
      listener(chunk)
    } catch (error) {
      this.#options.report(error)
    }
  }
}
