import type { TerminalLimits } from 'dsh-subprocess'
import type { LocalTerminal } from '../terminal'

/** Start one warm launcher under `limits`, joined and waiting; `undefined` when none can be made here. */
export type WarmStarter = (limits: TerminalLimits) => Promise<LocalTerminal | undefined>

/**
 * Launchers kept waiting per set of limits: two, so that spawns in quick succession (each takes one
 * while the next starts in the background) still find one ready when a start takes longer than the
 * gap between them.
 */
export const WARM_LAUNCHERS_PER_LIMITS = 2

/**
 * Warm launchers per set of limits: PTYs whose launcher already joined a session's fresh cgroups and
 * waits for the program to start. Joining costs the kernel an RCU grace period (several ms whenever
 * no cgroup migration ran just before); a warm launcher paid it in the background. The first spawn
 * under some limits starts them, each spawn that takes one starts the next. A set of limits for which
 * a launcher could not be made is not tried again.
 */
export class WarmLaunchers {
  readonly #start: WarmStarter
  readonly #ready = new Map<string, LocalTerminal[]>()
  readonly #starting = new Map<string, number>()
  readonly #pending = new Set<Promise<void>>()
  readonly #refused = new Set<string>()
  #stopped = false

  /** `start` makes one launcher; nothing starts before the first {@link refill}. */
  constructor(start: WarmStarter) {
    this.#start = start
  }

  /** Pids of the launchers waiting now (diagnostics and tests). */
  get pids(): number[] {
    return [...this.#ready.values()].flatMap((terminals) => terminals.map((terminal) => terminal.pid))
  }

  /** A waiting launcher for `limits`, removed from the pool, when one is ready. */
  take(limits: TerminalLimits): LocalTerminal | undefined {
    const waiting = this.#ready.get(limitsKey(limits)) ?? []
    for (let terminal = waiting.shift(); terminal; terminal = waiting.shift()) {
      if (terminal.launchable) return terminal
      void terminal.terminate().catch(() => undefined)
    }
    return undefined
  }

  /** Start launchers for `limits` after the current turn until enough wait or start, unless none can be made. */
  refill(limits: TerminalLimits): void {
    const key = limitsKey(limits)
    if (this.#stopped || this.#refused.has(key)) return
    const missing = WARM_LAUNCHERS_PER_LIMITS - (this.#ready.get(key)?.length ?? 0) - (this.#starting.get(key) ?? 0)
    for (let index = 0; index < missing; index++) {
      this.#starting.set(key, (this.#starting.get(key) ?? 0) + 1)
      const started = new Promise<void>((resolve) => setImmediate(resolve))
        .then(() => this.#fill(key, limits))
        .finally(() => {
          this.#starting.set(key, (this.#starting.get(key) ?? 1) - 1)
          this.#pending.delete(started)
        })
      this.#pending.add(started)
    }
  }

  /** Start nothing more; wait for the launchers being started; terminate every waiting one. */
  async dispose(): Promise<void> {
    this.#stopped = true
    await Promise.allSettled([...this.#pending])
    const waiting = [...this.#ready.values()].flat()
    this.#ready.clear()
    await Promise.allSettled(waiting.map((terminal) => terminal.terminate()))
  }

  async #fill(key: string, limits: TerminalLimits): Promise<void> {
    if (this.#stopped || this.#refused.has(key)) return
    const terminal = await this.#start(limits).catch(() => undefined)
    if (!terminal) {
      this.#refused.add(key)
      return
    }
    if (this.#stopped) {
      await terminal.terminate().catch(() => undefined)
      return
    }
    const waiting = this.#ready.get(key) ?? []
    waiting.push(terminal)
    this.#ready.set(key, waiting)
    // One that ends while it waits (killed from outside) is dropped, and its cgroups with it.
    void terminal.done.then(() => {
      const index = waiting.indexOf(terminal)
      if (index < 0) return
      waiting.splice(index, 1)
      void terminal.terminate().catch(() => undefined)
    })
  }
}

function limitsKey(limits: TerminalLimits): string {
  return `${limits.maxProcesses ?? '-'}/${limits.maxMemoryBytes ?? '-'}`
}
