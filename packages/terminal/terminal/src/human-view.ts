import type { TerminalBackendSession, TerminalBackendTap } from './backend'
import { refuse } from './errors'
import type { HumanPresence, TerminalHumanObserver, TerminalHumanView } from './human'
import type { TerminalSize } from './screen'
import type { TerminalSessionId } from './types'

/**
 * One person's view, bound to its session's {@link HumanPresence}: it counts as attached from the
 * moment its tap opened until it is closed or the session ends, and types only as the writer.
 */
export class HumanView implements TerminalHumanView {
  readonly sessionId: TerminalSessionId
  readonly size: TerminalSize | undefined
  #screen = ''
  #tap: TerminalBackendTap | undefined
  #closed = false

  private constructor(
    sessionId: TerminalSessionId,
    private readonly session: TerminalBackendSession,
    private readonly presence: HumanPresence,
    private readonly observer: TerminalHumanObserver,
    private readonly forget: (view: HumanView) => void,
  ) {
    this.sessionId = sessionId
    this.size = session.size && { rows: session.size.rows, cols: session.size.cols }
  }

  /**
   * Open a tap on `session` and count the person as attached; resolves once the screen is rendered.
   * `forget` runs when the view ends (closed by its holder or by the session).
   */
  static async open(
    sessionId: TerminalSessionId,
    session: TerminalBackendSession,
    presence: HumanPresence,
    observer: TerminalHumanObserver,
    forget: (view: HumanView) => void,
  ): Promise<HumanView> {
    if (!session.tap || !session.writeAsHuman) throw refuse.notWatchable(sessionId)
    const view = new HumanView(sessionId, session, presence, observer, forget)
    presence.join(view)
    view.#tap = session.tap(
      (bytes) => {
        if (!view.#closed) observer.onOutput(bytes)
      },
      (reason) => view.endedBySession(reason),
    )
    try {
      view.#screen = await view.#tap.screen
    } catch (error) {
      view.close()
      throw error
    }
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
    if (!this.presence.claimWrite(this)) throw refuse.writerTaken(this.sessionId)
  }

  releaseWrite(): void {
    this.presence.releaseWrite(this)
  }

  async write(data: string): Promise<void> {
    if (typeof data !== 'string') throw refuse.invalid('what a person types must be a string')
    if (this.#closed) throw refuse.closing(this.sessionId)
    if (!this.writing) throw refuse.invalid(`this view of PTY session ${this.sessionId} is not the writer: take the writer role first`)
    if (data === '') return
    this.presence.typed()
    await (this.session.writeAsHuman as (data: string) => Promise<void>)(data)
  }

  close(): void {
    if (this.#closed) return
    this.#end()
  }

  /** The session ended the view (it exited or closed): the observer hears `reason` once. */
  endedBySession(reason: string): void {
    if (this.#closed) return
    this.#end()
    this.observer.onEnd(reason)
  }

  /** The view is over: no more output, no writer role, not attached. */
  #end(): void {
    this.#closed = true
    this.#tap?.close()
    this.presence.leave(this)
    this.forget(this)
  }
}
