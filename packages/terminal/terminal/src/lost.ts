import type { Agent } from 'dsh-agent'
import type { TerminalSessionId } from './types'

/** Reason passed to a session's backend when the registry drops it because its session host died. */
export const SESSION_HOST_LOST_REASON = 'PTY session host lost'

/** How many lost ids are remembered; older ones then answer `NO_SESSION` like any unknown id. */
const MAX_REMEMBERED = 1024

/**
 * Ids of sessions dropped because the session host holding them died, with the owner that held them
 * (none for a detached one): the next call for one of them is `SESSION_HOST_LOST`, not `NO_SESSION`,
 * so the model learns its processes are gone rather than that it mistyped an id.
 */
export class LostSessions {
  readonly #owners = new Map<TerminalSessionId, Agent | undefined>()

  /** Remember `id` as lost; `owner` undefined when it was detached (any caller may hear of it). */
  add(id: TerminalSessionId, owner: Agent | undefined): void {
    this.#owners.delete(id)
    this.#owners.set(id, owner)
    if (this.#owners.size > MAX_REMEMBERED) this.#owners.delete(this.#owners.keys().next().value as TerminalSessionId)
  }

  /** Whether `caller` should hear that `id` was lost (its owner, or anyone for a detached one). */
  concerns(id: TerminalSessionId, caller: Agent): boolean {
    if (!this.#owners.has(id)) return false
    const owner = this.#owners.get(id)
    return owner === undefined || owner === caller
  }

  /** Forget everything an owner held once it ended (its ids concern nobody now). */
  forgetOwner(owner: Agent): void {
    for (const [id, held] of this.#owners) if (held === owner) this.#owners.delete(id)
  }
}
