import type { TerminalBackendSession, TerminalBackendTap } from './backend'
import { refuse } from './errors'
import { type AttachedView, DEFAULT_HUMAN_CLIENT, type HumanPresence, type TerminalHumanObserver, type TerminalHumanView } from './human'
import type { TerminalSize } from './screen'
import type { TerminalSessionId } from './types'

/**
 * One person's view, bound to its session's {@link HumanPresence}: it counts as attached from the
 * moment its tap opened until it is closed or the session ends, and types only as the writer.
 * Output (and an end) arriving before {@link HumanView.open} resolved is held and handed to the
 * observer right after, in order, so the holder can send the screen first.
 */
export class HumanView implements TerminalHumanView, AttachedView {
  readonly sessionId: TerminalSessionId
  readonly size: TerminalSize | undefined
  readonly client: string
  #screen = ''
  #tap: TerminalBackendTap | undefined
  #closed = false
  /** Set by {@link HumanView.close}: the holder wants nothing more, held things included. */
  #silenced = false
  /** True once `open` resolved: the holder has the view. */
  #opened = false
  /** Output held until the holder has the view; undefined once it was handed over. */
  #held: Uint8Array[] | undefined = []
  /** An end that arrived while output was held; told after it. */
  #heldEnd: string | undefined

  private constructor(
    sessionId: TerminalSessionId,
    private readonly session: TerminalBackendSession,
    private readonly presence: HumanPresence,
    private readonly observer: TerminalHumanObserver,
    client: string,
  ) {
    this.sessionId = sessionId
    this.client = client
    this.size = session.size && { rows: session.size.rows, cols: session.size.cols }
  }

  /** Open a tap on `session` and count the person as attached; resolves once the screen is rendered. */
  static async open(
    sessionId: TerminalSessionId,
    session: TerminalBackendSession,
    presence: HumanPresence,
    observer: TerminalHumanObserver,
    client: string = DEFAULT_HUMAN_CLIENT,
  ): Promise<HumanView> {
    if (!session.tap || !session.writeAsHuman) throw refuse.notWatchable(sessionId)
    const view = new HumanView(sessionId, session, presence, observer, client)
    const tap = session.tap(
      (bytes) => view.#output(bytes),
      (reason) => view.endedBySession(reason),
    )
    view.#tap = tap
    // Joined only once the tap exists (a tap that throws counts nobody), and before the await, so a
    // session that ends meanwhile ends this view too.
    if (!view.#closed) presence.join(view)
    try {
      view.#screen = await tap.screen
    } catch (error) {
      view.close()
      throw error
    }
    view.#opened = true
    if (view.#held?.length === 0 && view.#heldEnd === undefined) view.#held = undefined
    // The holder resumes in this turn's microtasks; what was held follows in the next turn, unless
    // newer output or an end arrives first (then it goes first).
    else setImmediate(() => view.#release())
    return view
  }

  get screen(): string {
    return this.#screen
  }

  get writing(): boolean {
    return !this.#closed && this.presence.writer === this
  }

  takeWrite(): void {
    if (this.#closed) throw refuse.closing(this.sessionId)
    if (this.presence.claimWrite(this)) return
    throw refuse.writerTaken(this.sessionId, this.presence.writerState() ?? { client: DEFAULT_HUMAN_CLIENT, typing: false })
  }

  releaseWrite(): void {
    this.presence.releaseWrite(this)
  }

  async write(data: string): Promise<void> {
    if (typeof data !== 'string') throw refuse.invalid('what a person types must be a string')
    if (this.#closed) throw refuse.closing(this.sessionId)
    if (!this.writing) throw refuse.invalid(`this view of PTY session ${this.sessionId} is not the writer: take the writer role first`)
    if (data === '') return
    this.presence.typed(this)
    await (this.session.writeAsHuman as (data: string) => Promise<void>)(data)
  }

  close(): void {
    this.#silenced = true
    this.#held = undefined
    this.#heldEnd = undefined
    if (this.#closed) return
    this.#end()
  }

  /** The session ended the view (it exited or closed): the observer hears `reason` once, after any held output. */
  endedBySession(reason: string): void {
    if (this.#closed) return
    this.#end()
    if (this.#held === undefined) return this.observer.onEnd(reason)
    this.#heldEnd = reason
    if (this.#opened) this.#release()
  }

  #output(bytes: Uint8Array): void {
    if (this.#closed) return
    if (this.#held !== undefined) {
      if (!this.#opened) {
        this.#held.push(bytes)
        return
      }
      this.#release()
      if (this.#closed) return
    }
    this.observer.onOutput(bytes)
  }

  /** Hand the held output, then a held end, to the observer (once; nothing after the holder closed). */
  #release(): void {
    const held = this.#held
    if (held === undefined) return
    this.#held = undefined
    for (const bytes of held) {
      if (this.#silenced) return
      this.observer.onOutput(bytes)
    }
    const end = this.#heldEnd
    this.#heldEnd = undefined
    if (end !== undefined && !this.#silenced) this.observer.onEnd(end)
  }

  /** The view is over: no more output, no writer role, not attached. */
  #end(): void {
    this.#closed = true
    this.#tap?.close()
    this.presence.leave(this)
  }
}
