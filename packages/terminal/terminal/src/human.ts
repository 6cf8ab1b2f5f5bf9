import type { TerminalSize } from './screen'
import type { TerminalSessionId } from './types'

/**
 * A person beside the agent, as results and lists tell it: `watching` while someone is attached,
 * `typing` while someone attached typed within the last `humanActiveMs`.
 */
export type TerminalHumanPresence = 'watching' | 'typing'

/** Default `humanActiveMs`: how long after a person's last keystroke an agent's send is refused. */
export const DEFAULT_HUMAN_ACTIVE_MS = 5_000

/** What refusals call a view whose host named no client: true, if vaguer than the host's own name. */
export const DEFAULT_HUMAN_CLIENT = 'an attached view'

/** Longest client name a host may give a view (it ends up in messages a model reads). */
export const MAX_HUMAN_CLIENT_LENGTH = 80

/** How a host opens a person's view, so refusals can say where that person actually is. */
export interface TerminalHumanViewOptions {
  /**
   * Where the person is, as a phrase that completes "a person is typing in PTY session pty-1 from …"
   * (`the web view in a browser`, `a terminal (dsh-terminal attach)`); {@link DEFAULT_HUMAN_CLIENT} when absent.
   */
  client?: string
}

/**
 * Who is attached to a session, in more detail than {@link TerminalHumanPresence}: for a person
 * choosing what to attach to, so a list and a refusal tell the same story.
 */
export interface TerminalHumanSummary {
  /** How many views are open, the writer's included. */
  readonly attached: number
  /** The view that took over (holds the writer role), if any: where it is and whether it typed within `humanActiveMs`. */
  readonly writer?: { readonly client: string; readonly typing: boolean }
}

/** Where a person's view of a session gets the terminal's output. */
export interface TerminalHumanObserver {
  /**
   * Raw PTY output in arrival order, starting exactly after {@link TerminalHumanView.screen}; never
   * called before `observeAsHuman` resolved, so a holder that sends the screen first keeps the order.
   * Output printed while the screen was being rendered is held and handed over after that, first.
   */
  onOutput(bytes: Uint8Array): void
  /**
   * The session ended the view (it closed or exited). Called once, after any held output, and never
   * before `observeAsHuman` resolved; not called for {@link TerminalHumanView.close}.
   */
  onEnd(reason: string): void
}

/**
 * One person's view of one session, opened through `ctx.terminals.observeAsHuman` by a host acting
 * for the session's owner. It watches from the rendered screen on; it types only as the session's
 * one writer, and typing makes the agent's sends wait (`HUMAN_ACTIVE`).
 */
export interface TerminalHumanView {
  /** The session watched. */
  readonly sessionId: TerminalSessionId
  /**
   * The screen when the view opened, as terminal output that redraws it on a cleared terminal of
   * {@link TerminalHumanView.size} (text, colours, cursor); the observer's output continues from it.
   */
  readonly screen: string
  /** The session's window size when the view opened. */
  readonly size: TerminalSize | undefined
  /** Where the person is, as the host named it (see {@link TerminalHumanViewOptions.client}). */
  readonly client: string
  /** True while this view is the session's writer. */
  readonly writing: boolean
  /** Become the session's one writer; `HUMAN_WRITER_TAKEN` while another view is. */
  takeWrite(): void
  /** Give the writer role back (a no-op for a view that does not hold it). */
  releaseWrite(): void
  /** Type `data` into the terminal as the person; needs the writer role. Never part of a result. */
  write(data: string): Promise<void>
  /** Stop watching (and writing). Idempotent; the observer's `onEnd` is not called for it. */
  close(): void
}

/** A view as its session's presence holds it: the session can end it. */
export interface AttachedView {
  /** Where the person is (see {@link TerminalHumanViewOptions.client}). */
  readonly client: string
  /** The session ended the view (it closed or exited): it leaves the presence and its observer hears `reason`. */
  endedBySession(reason: string): void
}

/**
 * The people attached to one session and when one last typed. Presence is derived on every read
 * from the attached views and the clock, so nothing has to expire it.
 */
export class HumanPresence {
  readonly #views = new Set<AttachedView>()
  #writer: AttachedView | undefined
  #lastTypedAt = Number.NEGATIVE_INFINITY
  /** The view that typed the latest keystroke, while it is attached. */
  #lastTypist: AttachedView | undefined
  /** Where the latest keystroke came from (kept after its view left). */
  #lastTypistClient = DEFAULT_HUMAN_CLIENT

  constructor(
    /** Milliseconds after a keystroke during which the person counts as typing. */
    readonly activeMs: number,
    /** The clock (monotonic milliseconds). */
    private readonly now: () => number = () => performance.now(),
    /** Told of every keystroke (never of what was typed): session observers hear that a person typed. */
    private readonly onTyped: () => void = () => {},
  ) {}

  /** `typing`, `watching` or (nobody attached) `undefined`. */
  get presence(): TerminalHumanPresence | undefined {
    if (this.#views.size === 0) return undefined
    return this.typingFor() > 0 ? 'typing' : 'watching'
  }

  /** Milliseconds until the latest keystroke stops counting as typing; 0 when it no longer does. */
  typingFor(): number {
    if (this.#views.size === 0) return 0
    return Math.max(0, this.#lastTypedAt + this.activeMs - this.now())
  }

  /** Where the latest keystroke came from, for a `HUMAN_ACTIVE` refusal. */
  get typistClient(): string {
    return this.#lastTypistClient
  }

  /** How many views are open and what the writer does; `undefined` when nobody is attached. */
  summary(): TerminalHumanSummary | undefined {
    if (this.#views.size === 0) return undefined
    const writer = this.writerState()
    return writer === undefined ? { attached: this.#views.size } : { attached: this.#views.size, writer }
  }

  /** Where the writer is and whether it typed within `activeMs`; `undefined` while nobody took over. */
  writerState(): { client: string; typing: boolean } | undefined {
    const writer = this.#writer
    if (writer === undefined) return undefined
    return { client: writer.client, typing: this.#lastTypist === writer && this.typingFor() > 0 }
  }

  /** Count a view as attached. */
  join(view: AttachedView): void {
    this.#views.add(view)
  }

  /** Forget a view (and its writer role). */
  leave(view: AttachedView): void {
    this.#views.delete(view)
    if (this.#writer === view) this.#writer = undefined
    if (this.#lastTypist === view) this.#lastTypist = undefined
  }

  /** The session ended: end every view still attached (each leaves as it ends). */
  endAll(reason: string): void {
    for (const view of [...this.#views]) view.endedBySession(reason)
  }

  /** The view holding the writer role, if any. */
  get writer(): AttachedView | undefined {
    return this.#writer
  }

  /** Give `view` the writer role; false when another view holds it. */
  claimWrite(view: AttachedView): boolean {
    if (this.#writer !== undefined && this.#writer !== view) return false
    this.#writer = view
    return true
  }

  /** Drop `view`'s writer role, if it holds it. */
  releaseWrite(view: AttachedView): void {
    if (this.#writer === view) this.#writer = undefined
  }

  /** A keystroke from the writer `view`: the agent's sends wait from now for `activeMs`. */
  typed(view: AttachedView): void {
    this.#lastTypedAt = this.now()
    this.#lastTypist = view
    this.#lastTypistClient = view.client
    this.onTyped()
  }
}
