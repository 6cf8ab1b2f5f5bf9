import { withTimeout } from 'dsh-basics'
import type { TerminalHumanObserver, TerminalHumanView, TerminalInputState, TerminalSize } from 'dsh-terminal'
import type { HumanEvent, HumanEventKind } from './events'

/** How long the look at the terminal before a submitted line may take; past it the line goes out unreported. */
const INPUT_LOOK_MS = 1000

/** What an {@link ObservedView} needs besides the view: where events go and how to ask what the terminal waits for. */
export interface ViewWatch {
  /** The session's owner. */
  readonly agentId: string
  /** Where the person is. */
  readonly client: string
  /** Report one event (never throws into the view). */
  emit(event: HumanEvent): void
  /** What the terminal waits for now; `undefined` when it cannot tell. */
  inputState(): Promise<TerminalInputState | undefined>
}

/**
 * A person's view as the gateway hands it out: the registry's view, with what the person does reported
 * as {@link HumanEvent}s. A written line (it holds Enter) is preceded by a look at the terminal, and a
 * line submitted while it asks for a password becomes `secret_handoff`, without the text. Writes stay
 * in order: each waits for the one before it.
 */
export class ObservedView implements TerminalHumanView {
  #queue: Promise<unknown> = Promise.resolve()
  #left = false

  private constructor(
    private readonly view: TerminalHumanView,
    private readonly watch: ViewWatch,
  ) {}

  /** Wrap the observer first (so a session end reports `detach`), open the view with it, then wrap the view. */
  static async open(
    watch: ViewWatch,
    observer: TerminalHumanObserver,
    open: (observer: TerminalHumanObserver) => Promise<TerminalHumanView>,
  ): Promise<ObservedView> {
    let observed: ObservedView | undefined
    const view = await open({
      onOutput: (bytes) => observer.onOutput(bytes),
      onEnd: (reason) => {
        observed?.leave()
        observer.onEnd(reason)
      },
    })
    observed = new ObservedView(view, watch)
    observed.report('attach', { writer: view.writing })
    return observed
  }

  get sessionId() {
    return this.view.sessionId
  }

  get screen(): string {
    return this.view.screen
  }

  get size(): TerminalSize | undefined {
    return this.view.size
  }

  get client(): string {
    return this.view.client
  }

  get writing(): boolean {
    return this.view.writing
  }

  takeWrite(): void {
    const before = this.view.writing
    this.view.takeWrite()
    if (!before) this.report('takeover')
  }

  releaseWrite(): void {
    const before = this.view.writing
    this.view.releaseWrite()
    if (before && !this.view.writing) this.report('release')
  }

  write(data: string): Promise<void> {
    const turn = this.#queue.then(() => this.#write(data))
    this.#queue = turn.catch(() => undefined)
    return turn
  }

  close(): void {
    this.leave()
    this.view.close()
  }

  /** Report `detach` once (the holder closed the view, or the session ended it). */
  leave(): void {
    if (this.#left) return
    this.#left = true
    this.report('detach')
  }

  async #write(data: string): Promise<void> {
    // Only a line that is submitted hands anything over; single keystrokes go out without a look.
    if (typeof data !== 'string' || !/[\r\n]/.test(data) || !this.view.writing) return this.view.write(data)
    const input = await withTimeout(
      this.watch.inputState().catch(() => undefined),
      INPUT_LOOK_MS,
      () => undefined,
    )
    await this.view.write(data)
    if (input?.kind === 'password') this.report('secret_handoff', input.program ? { program: input.program.name } : {})
  }

  private report(kind: HumanEventKind, extra: Pick<HumanEvent, 'writer' | 'program'> = {}): void {
    try {
      this.watch.emit({ kind, sessionId: this.view.sessionId, agentId: this.watch.agentId, client: this.watch.client, ...extra })
    } catch {
      // A listener never breaks a person's view.
    }
  }
}
