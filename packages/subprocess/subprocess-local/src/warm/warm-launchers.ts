import type { SpawnWrapper, TerminalLimits } from 'dsh-subprocess'
import type { LocalTerminal } from '../terminal'

/** One launcher waiting, and (inside a wrapper started ahead) whether it is still current and when it expires. */
export interface WarmLauncher {
  readonly terminal: LocalTerminal
  /** False once what the wrapper would make now differs from what this launcher runs in. */
  readonly current?: () => boolean
  /** Aborts when the wrapper's provider drops everything it started ahead. */
  readonly expired?: AbortSignal
}

/**
 * Start one warm launcher under `limits` (inside `wrapper` started ahead, when given), joined and
 * waiting. `undefined`: none can be made for this key here, never again; `'later'`: not now (a
 * wrapper that cannot be started ahead at the moment), tried again at the next refill.
 */
export type WarmStarter = (limits: TerminalLimits, wrapper: SpawnWrapper | undefined) => Promise<WarmLauncher | 'later' | undefined>

/**
 * Launchers kept waiting per set of limits: two, so that spawns in quick succession (each takes one
 * while the next starts in the background) still find one ready when a start takes longer than the
 * gap between them.
 */
export const WARM_LAUNCHERS_PER_LIMITS = 2

/** Wrapper keys (e.g. sandboxes of different workspaces) kept warm at once; the least recently used goes first. */
export const WARM_WRAPPER_KEYS = 4

/** A wrapped key whose starts failed this many times in a row is not tried again (a later success resets the count). */
const WRAPPED_FAILURES = 3

/**
 * Warm launchers per set of limits: PTYs whose launcher already joined a session's fresh cgroups and
 * waits for the program to start. Joining costs the kernel an RCU grace period (several ms whenever
 * no cgroup migration ran just before); a warm launcher paid it in the background. The first spawn
 * under some limits starts them, each spawn that takes one starts the next. A set of limits for which
 * a launcher could not be made is not tried again.
 */
export class WarmLaunchers {
  readonly #start: WarmStarter
  readonly #ready = new Map<string, WarmLauncher[]>()
  readonly #starting = new Map<string, number>()
  readonly #pending = new Set<Promise<void>>()
  readonly #refused = new Set<string>()
  readonly #failures = new Map<string, number>()
  /** Wrapped keys, least recently used first. */
  readonly #wrappedKeys: string[] = []
  #stopped = false

  /** `start` makes one launcher; nothing starts before the first {@link refill}. */
  constructor(start: WarmStarter) {
    this.#start = start
  }

  /** Pids of the launchers waiting now (diagnostics and tests). */
  get pids(): number[] {
    return [...this.#ready.values()].flatMap((launchers) => launchers.map((launcher) => launcher.terminal.pid))
  }

  /** Pids of the launchers waiting inside a wrapper (of key `key`, when given; diagnostics and tests). */
  wrappedPids(key?: string): number[] {
    return [...this.#ready.entries()].flatMap(([poolKey, launchers]) => {
      const at = poolKey.indexOf('\0')
      const wanted = at >= 0 && (key === undefined || poolKey.slice(at + 1) === key)
      return wanted ? launchers.map((launcher) => launcher.terminal.pid) : []
    })
  }

  /**
   * A waiting launcher for `limits` (inside a wrapper of the same key, when given), removed from the
   * pool, when one is ready and still current; one that is not is ended.
   */
  take(limits: TerminalLimits, wrapper?: SpawnWrapper): LocalTerminal | undefined {
    const key = poolKey(limits, wrapper)
    const waiting = this.#ready.get(key) ?? []
    if (wrapper) this.#touch(key)
    for (let launcher = waiting.shift(); launcher; launcher = waiting.shift()) {
      const { terminal, current } = launcher
      if (terminal.launchable && (current === undefined || current())) return terminal
      void terminal.terminate().catch(() => undefined)
    }
    return undefined
  }

  /** Start launchers for `limits` (inside `wrapper`) after the current turn until enough wait or start, unless none can be made. */
  refill(limits: TerminalLimits, wrapper?: SpawnWrapper): void {
    const key = poolKey(limits, wrapper)
    if (this.#stopped || this.#refused.has(key)) return
    if (wrapper) this.#touch(key)
    const missing = WARM_LAUNCHERS_PER_LIMITS - (this.#ready.get(key)?.length ?? 0) - (this.#starting.get(key) ?? 0)
    for (let index = 0; index < missing; index++) {
      this.#starting.set(key, (this.#starting.get(key) ?? 0) + 1)
      const started = new Promise<void>((resolve) => setImmediate(resolve))
        .then(() => this.#fill(key, limits, wrapper))
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
    await Promise.allSettled(waiting.map((launcher) => launcher.terminal.terminate()))
  }

  /** Mark a wrapped key used; beyond {@link WARM_WRAPPER_KEYS} the least recently used one's launchers end. */
  #touch(key: string): void {
    const at = this.#wrappedKeys.indexOf(key)
    if (at >= 0) this.#wrappedKeys.splice(at, 1)
    this.#wrappedKeys.push(key)
    while (this.#wrappedKeys.length > WARM_WRAPPER_KEYS) {
      const dropped = this.#wrappedKeys.shift()!
      for (const launcher of this.#ready.get(dropped)?.splice(0) ?? []) void launcher.terminal.terminate().catch(() => undefined)
      this.#ready.delete(dropped)
    }
  }

  async #fill(key: string, limits: TerminalLimits, wrapper: SpawnWrapper | undefined): Promise<void> {
    if (this.#stopped || this.#refused.has(key)) return
    const started = await this.#start(limits, wrapper).catch(() => undefined)
    if (started === 'later') return
    if (!started) {
      // A plain launcher that failed once never will; a wrapper may fail for a moment (a workspace being changed).
      const failures = (this.#failures.get(key) ?? 0) + 1
      this.#failures.set(key, failures)
      if (!wrapper || failures >= WRAPPED_FAILURES) this.#refused.add(key)
      return
    }
    this.#failures.delete(key)
    const { terminal, expired } = started
    if (this.#stopped || expired?.aborted || (wrapper && !this.#wrappedKeys.includes(key))) {
      await terminal.terminate().catch(() => undefined)
      return
    }
    const waiting = this.#ready.get(key) ?? []
    waiting.push(started)
    this.#ready.set(key, waiting)
    const drop = () => {
      const index = waiting.indexOf(started)
      if (index < 0) return
      waiting.splice(index, 1)
      void terminal.terminate().catch(() => undefined)
    }
    // One that ends while it waits (killed from outside) is dropped, and its cgroups with it; so is
    // one whose wrapper expired (its provider unloaded). One already taken is no longer in `waiting`.
    void terminal.done.then(drop)
    expired?.addEventListener('abort', drop, { once: true })
  }
}

/** The pool a launcher belongs to: its limits, and its wrapper's key when it runs inside one. */
function poolKey(limits: TerminalLimits, wrapper: SpawnWrapper | undefined): string {
  const limitsKey = `${limits.maxProcesses ?? '-'}/${limits.maxMemoryBytes ?? '-'}`
  return wrapper ? `${limitsKey}\0${wrapper.key}` : limitsKey
}
