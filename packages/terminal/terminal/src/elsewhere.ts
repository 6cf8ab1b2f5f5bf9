import type { TerminalBackend, TerminalUnreachableTarget } from './backend'
import type { TerminalInputState } from './input-state'
import type { TerminalSessionId, TerminalSessionSnapshot } from './types'

/**
 * Sessions detached by another host process, known through the backends' `listDetached`: their ids
 * are never minted again here, and `list` shows them next to this process's own detached sessions.
 */
export class ElsewhereSessions {
  /** Ids a detached terminal of another process holds (or held): the counter skips them. */
  readonly #taken = new Set<string>()
  /** The names the last looks reported, so a resumed session keeps its own. */
  readonly #names = new Map<string, string>()
  /** The input states the last looks reported, so a list shows what each waits for. */
  readonly #inputs = new Map<string, TerminalInputState>()
  /** The targets the last looks reported, so a resume adopts the terminal where it runs. */
  readonly #targets = new Map<string, string>()
  /** Per backend type, the targets its last look could not ask. */
  readonly #unreachable = new Map<string, readonly TerminalUnreachableTarget[]>()
  /** The first look, which a spawn awaits so that it cannot mint a taken id. */
  #scan: Promise<void> | undefined

  /** Start the first look at a backend that can keep sessions beyond this process. */
  watch(backend: TerminalBackend): void {
    if (!backend.listDetached) return
    const scan = this.#look([backend]).then(() => {
      if (this.#scan === scan) this.#scan = undefined
    })
    this.#scan = this.#scan ? Promise.all([this.#scan, scan]).then(() => undefined) : scan
  }

  /** Settles once every first look ended (at once when there is none): a spawn waits for it. */
  get scanning(): Promise<void> | undefined {
    return this.#scan
  }

  /** The name the session `id` had, as the last look reported it. */
  nameOf(id: string): string | undefined {
    return this.#names.get(id)
  }

  /** The subprocess target the session `id` runs on, as the last look reported it (undefined: this machine). */
  targetOf(id: string): string | undefined {
    return this.#targets.get(id)
  }

  /** What the session `id` waited for when its last send settled, as the last look reported it. */
  inputOf(id: string): TerminalInputState | undefined {
    return this.#inputs.get(id)
  }

  /** The targets the backends' last looks could not ask (their sessions are missing from the list), each once. */
  unreachable(): TerminalUnreachableTarget[] {
    const byTarget = new Map<string, TerminalUnreachableTarget>()
    for (const targets of this.#unreachable.values()) for (const target of targets) byTarget.set(target.target, target)
    return [...byTarget.values()]
  }

  /** Whether another process's detached terminal holds `id`. */
  taken(id: string): boolean {
    return this.#taken.has(id)
  }

  /** The detached sessions of other processes the `backends` report now, not counting ids in `here`. */
  async list(backends: readonly TerminalBackend[], here: (id: TerminalSessionId) => boolean): Promise<TerminalSessionSnapshot[]> {
    const found = await this.#look(backends)
    return found.filter((snapshot) => !here(snapshot.sessionId))
  }

  async #look(backends: readonly TerminalBackend[]): Promise<TerminalSessionSnapshot[]> {
    const lists = await Promise.all(
      backends.map(async (backend) => {
        // A provider that cannot answer now lists nothing: the local sessions still show.
        const detached = (await backend.listDetached?.().catch(() => [])) ?? []
        // Read right after its own listing, so it names the targets that listing missed.
        this.#unreachable.set(backend.type, backend.unreachableTargets?.() ?? [])
        return detached.map((session) => ({ ...session, type: backend.type }))
      }),
    )
    const snapshots: TerminalSessionSnapshot[] = []
    for (const session of lists.flat()) {
      this.#taken.add(session.sessionId)
      const snapshot: TerminalSessionSnapshot = {
        sessionId: session.sessionId,
        type: session.type,
        status: { ...session.status },
        detachedAt: session.detachedAt,
      }
      if (session.name !== undefined) {
        snapshot.name = session.name
        this.#names.set(session.sessionId, session.name)
      }
      if (session.pid !== undefined) snapshot.pid = session.pid
      if (session.input !== undefined) this.#inputs.set(session.sessionId, session.input)
      else this.#inputs.delete(session.sessionId)
      if (session.target !== undefined) {
        snapshot.target = session.target
        this.#targets.set(session.sessionId, session.target)
      }
      snapshots.push(snapshot)
    }
    return snapshots
  }
}
