import type { Agent } from 'dsh-agent'
import type { TerminalBackendSession } from './backend'
import { refuse } from './errors'
import { HumanPresence, type TerminalHumanObserver, type TerminalHumanView } from './human'
import { HumanView } from './human-view'
import type { TerminalInputState } from './input-state'
import type { SessionListeners, TerminalSendStart } from './session-observers'
import { RecordedSend } from './recorded-send'
import type { TerminalSendOperation, TerminalSendRequest, TerminalSendResult, TerminalSessionId, TerminalSessionSnapshot } from './types'

/** One close attempt; the fence names it so an older failure can never clear a newer attempt. */
interface CloseAttempt {
  promise: Promise<void>
}

/** Identity of a published session, fixed at publication. */
export interface SessionIdentity {
  /** Service-issued id. */
  readonly id: TerminalSessionId
  /** The exact owning agent. */
  readonly owner: Agent
  /** Owner-local display name. */
  readonly name?: string
  /** Backend type that created the session. */
  readonly type: string
}

/**
 * A published session and the lifecycle state it owns: its close fence (one shared attempt at a
 * time, cleared only by that attempt's own failure) and its single send reservation.
 */
export class SessionRecord implements SessionIdentity {
  readonly id: TerminalSessionId
  /** The owning agent; the one mutable part of the identity, changed only by {@link SessionRecord.adopt}. */
  owner: Agent
  /** When its owner ended and it was kept, detached (epoch ms); undefined while an owner holds it. */
  detachedAt: number | undefined
  /** An adoption moved it to another owner at least once (a second adopter is told SESSION_ADOPTED). */
  adopted = false
  readonly name?: string
  readonly type: string
  /** People attached to the session, and when one last typed. */
  readonly human: HumanPresence
  #fence: CloseAttempt | undefined
  #send: object | undefined
  /** The current send outlives its caller (`outlivesOwner`): detachment keeps it and adoption does not wait for it. */
  #sendOutlives = false
  /** Settles when the current send's reservation is dropped. */
  #sendReleased: Promise<void> = Promise.resolve()
  /** Sends started so far (observers number them). */
  #sends = 0
  /** What the terminal waited for when the latest send settled, for observers of the next one. */
  #inputAfterLastSend: TerminalInputState | undefined

  constructor(
    identity: SessionIdentity,
    /** The backend session; the record never outlives a successful close of it. */
    readonly session: TerminalBackendSession,
    /** Called synchronously once a close succeeded, before any awaiter of that close resumes. */
    private readonly onClosed: (record: SessionRecord) => void,
    /** How long a person's keystroke holds agent sends off (`humanActiveMs`). */
    humanActiveMs: number,
    /** Session observers (a recorder): they hear sends, a person typing, and the end. */
    private readonly listeners?: SessionListeners,
  ) {
    this.id = identity.id
    this.owner = identity.owner
    this.name = identity.name
    this.type = identity.type
    this.human = new HumanPresence(humanActiveMs, undefined, listeners ? () => listeners.personTyped() : undefined)
  }

  /** True while a close attempt is in flight. */
  get closing(): boolean {
    return this.#fence !== undefined
  }

  /** True while a send holds the reservation. */
  get sendActive(): boolean {
    return this.#send !== undefined
  }

  /** Keep the session without an owner: the send in flight is released (no signal; its output becomes earlier output). */
  detach(): void {
    this.detachedAt = Date.now()
    if (!(this.#send && this.#sendOutlives)) this.session.release?.()
  }

  /** Hand a detached session to `owner`; resolves once a released send's reservation is dropped. */
  adopt(owner: Agent): Promise<void> {
    this.owner = owner
    this.detachedAt = undefined
    this.adopted = true
    // A send that outlives its caller (a background job) goes on holding the session: nothing to wait for.
    return this.#send && this.#sendOutlives ? Promise.resolve() : this.#sendReleased
  }

  /** A fresh owner-visible description. */
  snapshot(): TerminalSessionSnapshot {
    const snapshot: TerminalSessionSnapshot = { sessionId: this.id, type: this.type, status: this.session.status() }
    if (this.detachedAt !== undefined) snapshot.detachedAt = this.detachedAt
    if (this.name !== undefined) snapshot.name = this.name
    if (this.session.target !== undefined) snapshot.target = this.session.target
    if (this.session.pid !== undefined) snapshot.pid = this.session.pid
    if (this.session.size !== undefined) snapshot.size = { rows: this.session.size.rows, cols: this.session.size.cols }
    const human = this.human.presence
    if (human !== undefined) snapshot.human = human
    return snapshot
  }

  /** Open a person's view of this session (see `TerminalSessionService.observeAsHuman`). */
  async observe(observer: TerminalHumanObserver, client?: string): Promise<TerminalHumanView> {
    if (this.#fence) throw refuse.closing(this.id)
    // The view joins `human` before it awaits its screen, so a close meanwhile ends it too.
    return await HumanView.open(this.id, this.session, this.human, observer, client)
  }

  /**
   * Reserve the session and start one send, synchronously. The reservation is dropped only after
   * both `done` and the backend's optional `released` have settled; the handle's `done` settles after that.
   */
  startSend(request: TerminalSendRequest): RecordedSend {
    if (this.#fence) throw refuse.closing(this.id)
    if (this.#send) throw refuse.sendActive(this.id)
    const typing = this.human.typingFor()
    if (typing > 0) throw refuse.humanActive(this.id, typing, this.human.typistClient)
    const reservation = {}
    this.#send = reservation
    this.#sendOutlives = request.outlivesOwner === true
    let op: TerminalSendOperation
    try {
      op = this.session.startSend(request)
    } catch (error) {
      this.#send = undefined
      throw error
    }
    if (this.listeners) this.#observeSend(this.listeners, request, op)
    const released = this.#releaseAfter(op, reservation)
    this.#sendReleased = released
    return RecordedSend.of(op, released, this.human)
  }

  /** Drop the reservation once the operation settled and the backend let go of the session (never rejects). */
  async #releaseAfter(op: TerminalSendOperation, reservation: object): Promise<void> {
    await Promise.allSettled([op.done, op.released ?? op.done])
    if (this.#send === reservation) this.#send = undefined
  }

  /**
   * Tell observers a send started (synchronously, before the backend writes anything) and how it
   * settled; remember the input state it settled in, which the next send's observers are told.
   */
  #observeSend(listeners: SessionListeners, request: TerminalSendRequest, op: TerminalSendOperation): void {
    const send: { -readonly [K in keyof TerminalSendStart]: TerminalSendStart[K] } = {
      number: ++this.#sends,
      text: request.text ?? '',
      submit: request.submit === true,
    }
    if (typeof request.callId === 'string') send.callId = request.callId
    if (request.keys !== undefined) send.keys = [...request.keys]
    if (request.size !== undefined) send.size = { rows: request.size.rows, cols: request.size.cols }
    if (this.#inputAfterLastSend !== undefined) send.inputBefore = this.#inputAfterLastSend
    this.#inputAfterLastSend = undefined
    listeners.sendStarted(send)
    op.done.then(
      (result: TerminalSendResult) => {
        this.#inputAfterLastSend = result.input
        listeners.sendSettled(send, result)
      },
      () => listeners.sendSettled(send, undefined),
    )
  }

  /**
   * Close the backend session, or join the attempt already in flight (`joined: true`).
   * On failure the fence is cleared only if it still names this attempt, so a later close retries.
   */
  close(reason: string): { promise: Promise<void>; joined: boolean } {
    if (this.#fence) return { promise: this.#fence.promise, joined: true }
    const attempt: CloseAttempt = { promise: Promise.resolve() }
    this.#fence = attempt
    attempt.promise = this.#attempt(attempt, reason)
    return { promise: attempt.promise, joined: false }
  }

  async #attempt(attempt: CloseAttempt, reason: string): Promise<void> {
    try {
      await this.session.close(reason)
    } catch (error) {
      if (this.#fence === attempt) this.#fence = undefined
      throw error
    }
    // The backend's tap normally ends its views first; any left hear it here.
    this.human.endAll(`the session closed: ${reason}`)
    this.listeners?.ended(reason)
    this.onClosed(this)
  }
}
