import type { ProcessIdentity, ProcessRecord } from './inspector'

/**
 * Every descendant a handle has seen, by identity. A process stays tracked after it reparents,
 * so teardown still reaches it; it is forgotten once it is seen gone or a zombie.
 */
export class Tracker {
  readonly #members = new Map<number, ProcessIdentity>()
  /** Clock tick at which the shell was first seen gone (the session-adoption fence). */
  shellGoneTick: number | undefined
  /** The PTY's device number, learned from the shell's controlling terminal. */
  terminalDevice: number | undefined

  constructor(private readonly shellPid: number) {}

  /** Track live records (a pid whose identity changed is replaced: the old process is gone). */
  remember(records: readonly ProcessRecord[]): void {
    for (const record of records) {
      if (record.pid === this.shellPid) continue
      if (record.zombie) this.#members.delete(record.pid)
      else this.#members.set(record.pid, { pid: record.pid, started: record.started })
    }
  }

  /** Stop tracking processes that were verified gone. */
  forget(identities: Iterable<ProcessIdentity>): void {
    for (const identity of identities) {
      if (this.#members.get(identity.pid)?.started === identity.started) this.#members.delete(identity.pid)
    }
  }

  /** Identities currently tracked. */
  list(): ProcessIdentity[] {
    return [...this.#members.values()]
  }

  /** Number of tracked identities. */
  get size(): number {
    return this.#members.size
  }

  /** Forget every identity of `checked` that is not in `living` (they were verified gone). */
  retain(checked: readonly ProcessIdentity[], living: readonly ProcessIdentity[]): void {
    const alive = new Set(living.map((identity) => `${identity.pid}:${identity.started}`))
    this.forget(checked.filter((identity) => !alive.has(`${identity.pid}:${identity.started}`)))
  }
}
