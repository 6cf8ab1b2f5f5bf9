import { type DetachedTerminal, SubprocessError } from 'dsh-subprocess'
import type { HostedTerminal } from './hosted-terminal'

/** A session host's refusal of a call that carries a code of its own (not the seam's): `TOO_MANY_TERMINALS`. */
export class SessionHostRefusal extends Error {
  constructor(
    /** Stable routing code. */
    readonly code: 'TOO_MANY_TERMINALS',
    message: string,
  ) {
    super(message)
    this.name = 'SessionHostRefusal'
  }
}

/** A place in the table taken for one terminal (or a spawn that may become one); freed once. */
export type TerminalSlot = () => void

/**
 * Every terminal of one session host across its connections: the cap on how many there are
 * (detached ones and spawns in flight counted), the durable ones by key, and the detached ones with
 * their TTL. Adoption is decided here, synchronously: the first `adopt` of a key wins.
 */
export class TerminalTable {
  readonly #maxTerminals: number
  readonly #onDetachedGone: () => void
  readonly #byKey = new Map<string, HostedTerminal | 'spawning'>()
  readonly #ttl = new Map<HostedTerminal, NodeJS.Timeout>()
  #count = 0

  /** `onDetachedGone`: the last detached terminal went (the session host may arm its idle exit). */
  constructor(maxTerminals: number, onDetachedGone: () => void) {
    this.#maxTerminals = maxTerminals
    this.#onDetachedGone = onDetachedGone
  }

  /** Detached terminals now. */
  get detached(): number {
    return this.#ttl.size
  }

  /** Take a place for a spawn, and its durable key when it has one; throws `TOO_MANY_TERMINALS` or `INVALID_SPEC` (key in use). */
  admit(key: string | undefined): TerminalSlot {
    if (this.#count >= this.#maxTerminals) {
      throw new SessionHostRefusal(
        'TOO_MANY_TERMINALS',
        `this session host holds ${this.#count} terminals (detached ones included), its limit (--max-terminals ${this.#maxTerminals}); close one first`,
      )
    }
    if (key !== undefined) {
      if (this.#byKey.has(key)) throw new SubprocessError('INVALID_SPEC', `a durable terminal with key ${JSON.stringify(key)} already exists; keys are unique`)
      this.#byKey.set(key, 'spawning')
    }
    this.#count += 1
    let freed = false
    return () => {
      if (freed) return
      freed = true
      this.#count -= 1
      if (key !== undefined && this.#byKey.get(key) === 'spawning') this.#byKey.delete(key)
    }
  }

  /** The spawn of a durable terminal succeeded: adoption can find it by its key. */
  register(terminal: HostedTerminal): void {
    if (terminal.durable) this.#byKey.set(terminal.durable.key, terminal)
  }

  /** A durable terminal's connection went: detached until adopted, or terminated (its whole tree) at its TTL. */
  detach(terminal: HostedTerminal): void {
    terminal.detach()
    const timer = setTimeout(() => {
      this.#ttl.delete(terminal)
      this.forget(terminal)
      void terminal.handle.terminate().then(terminal.slot, terminal.slot)
      if (this.#ttl.size === 0) this.#onDetachedGone()
    }, terminal.durable!.ttlMs)
    this.#ttl.set(terminal, timer)
  }

  /** Take a detached terminal over: `TERMINAL_NOT_FOUND` when no durable terminal has `key`, `TERMINAL_ADOPTED` when a connection holds it. */
  adopt(key: string): HostedTerminal {
    const terminal = this.#byKey.get(key)
    if (terminal === undefined) {
      throw new SubprocessError('TERMINAL_NOT_FOUND', `no durable terminal has key ${JSON.stringify(key)} (never spawned, terminated, or its TTL passed)`)
    }
    const timer = terminal === 'spawning' ? undefined : this.#ttl.get(terminal)
    if (terminal === 'spawning' || !timer) {
      throw new SubprocessError(
        'TERMINAL_ADOPTED',
        `the durable terminal ${JSON.stringify(key)} is held by another connection (it is attached or was adopted first)`,
      )
    }
    clearTimeout(timer)
    this.#ttl.delete(terminal)
    return terminal
  }

  /** The detached durable terminals, as `list` reports them. */
  list(): DetachedTerminal[] {
    return [...this.#ttl.keys()].map((terminal) => ({
      key: terminal.durable!.key,
      pid: terminal.handle.pid,
      detachedAt: terminal.detachedAt ?? Date.now(),
      facts: terminal.facts,
      outputBytes: terminal.outputBytes,
      ...(terminal.exit ? { exit: terminal.exit } : {}),
    }))
  }

  /** A terminal was terminated: its key is free again. */
  forget(terminal: HostedTerminal): void {
    if (terminal.durable && this.#byKey.get(terminal.durable.key) === terminal) this.#byKey.delete(terminal.durable.key)
  }

  /** Terminate every detached terminal now (the session host closes). */
  async closeDetached(): Promise<void> {
    const detached = [...this.#ttl.keys()]
    for (const terminal of detached) {
      clearTimeout(this.#ttl.get(terminal))
      this.#ttl.delete(terminal)
      this.forget(terminal)
    }
    await Promise.allSettled(detached.map((terminal) => terminal.handle.terminate().finally(terminal.slot)))
  }
}
