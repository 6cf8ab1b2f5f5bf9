import { isSubprocessError, SubprocessError } from 'dsh-subprocess'
import type { AdoptResult } from 'dsh-session-host'
import type { SessionHostClient } from './client'
import type { TargetLink } from './target-link'

/** The longest pause between two tries to reach a lost target again. */
export const MAX_READOPT_PAUSE_MS = 30_000

/** Between two adopt tries answered `TERMINAL_ADOPTED` (the far side has not noticed the old connection end yet). */
const ADOPTED_RETRY_MS = 100

/** What a {@link Readopter} works on. */
export interface ReadopterOptions {
  /** The durable key the terminal was spawned (or adopted) with. */
  readonly key: string
  /** Its target's link: re-adoption shares the target's one new connection. */
  readonly link: TargetLink
  /** How long one try may take: the new connection, and adopt answers `TERMINAL_ADOPTED` (`startTimeoutMs`). */
  readonly tryMs: number
  /** The first pause after a failed try (`livenessMs`), doubled each time up to {@link MAX_READOPT_PAUSE_MS}. */
  readonly pauseMs: number
  /** How long after the loss tries go on (`readoptWithinMs`, capped by the terminal's TTL); then it ends. */
  readonly withinMs: number
}

/** The terminal a {@link Readopter} brings back. */
export interface Readoptable {
  /** Adopted again: called synchronously with the adopt reply, before its replay frames (`inputOffset`: the input it took). */
  rebind(client: SessionHostClient, number: number, from: number, inputOffset?: number): number
  /** The way back is closed: the terminal ends with `error`. */
  abandon(error: Error): void
}

/**
 * Brings a durable terminal back after its connection was lost: the session host on the far side
 * keeps it detached, so once the target answers again it is adopted on the new connection, and the
 * replay continues the stream where this side stopped. Tries start at the loss, then with growing
 * pauses (the link's own reconnect), and at once when a call needs the terminal.
 */
export class Readopter {
  readonly #options: ReadopterOptions
  #terminal: Readoptable | undefined
  #dead: SessionHostClient | undefined
  #lostAt: number | undefined
  #loss: Error | undefined
  #trying: Promise<void> | undefined
  /** When the try under way started. */
  #tryStarted = 0
  #timer: NodeJS.Timeout | undefined
  #pause: number
  #stopped = false

  constructor(options: ReadopterOptions) {
    this.#options = options
    this.#pause = options.pauseMs
  }

  /** The terminal to bring back (set once it exists). */
  bind(terminal: Readoptable): void {
    this.#terminal = terminal
  }

  /** The terminal's connection `dead` was lost with `error`: start trying. */
  lost(error: Error, dead: SessionHostClient): void {
    // Stopped (the provider is going away, its own hang-up is this loss): the handle ends here; the far side keeps the terminal.
    if (this.#stopped) return this.#terminal?.abandon(error)
    this.#dead = dead
    this.#loss = error
    this.#lostAt = performance.now()
    this.#pause = this.#options.pauseMs
    void this.now()
  }

  /**
   * Try now (or join the try under way); settles when it ended, whatever its outcome. With `fresh`,
   * a try begun before this call (perhaps while the link was still down) does not count: when it
   * fails, one more is made.
   */
  async now(fresh = false): Promise<void> {
    const since = performance.now()
    for (;;) {
      if (this.#lostAt === undefined || this.#stopped) return
      clearTimeout(this.#timer)
      if (!this.#trying) {
        this.#tryStarted = performance.now()
        this.#trying = this.#try().finally(() => (this.#trying = undefined))
      }
      const started = this.#tryStarted
      await this.#trying
      if (!fresh || started >= since) return
    }
  }

  /** No more tries (the provider is going away; the far side keeps the terminal for its TTL). */
  stop(): void {
    this.#stopped = true
    clearTimeout(this.#timer)
    // A terminal suspended at that moment would wait for a try that never comes: it ends now.
    if (this.#lostAt !== undefined) this.#giveUp(this.#loss!)
  }

  async #try(): Promise<void> {
    const terminal = this.#terminal
    const dead = this.#dead
    if (!terminal || !dead) return
    const deadline = performance.now() + this.#options.tryMs
    try {
      const client = await this.#options.link.clientAfter(dead)
      for (;;) {
        try {
          await client.request('adopt', { key: this.#options.key }, undefined, (result) => {
            const adopted = result as AdoptResult
            terminal.rebind(client, adopted.terminal, adopted.replayFrom, adopted.inputOffset)
          })
          this.#lostAt = undefined
          return
        } catch (error) {
          // Held by the old connection until the far side notices it ended (its ssh got our FIN or RST).
          if (!isSubprocessError(error, 'TERMINAL_ADOPTED') || performance.now() + ADOPTED_RETRY_MS > deadline) throw error
          await pause(ADOPTED_RETRY_MS)
        }
      }
    } catch (error) {
      if (this.#stopped) return
      if (isSubprocessError(error, 'TERMINAL_NOT_FOUND')) return this.#giveUp(ended(this.#options.key))
      if (isSubprocessError(error, 'TERMINAL_ADOPTED')) return this.#giveUp(error as Error)
      this.#later()
    }
  }

  /** The target did not answer: try again after a pause, or give up once `withinMs` passed since the loss. */
  #later(): void {
    if (this.#lostAt === undefined) return
    const left = this.#lostAt + this.#options.withinMs - performance.now()
    if (left <= 0) return this.#giveUp(this.#loss!)
    this.#timer = setTimeout(() => void this.now(), Math.min(this.#pause, left))
    this.#timer.unref()
    this.#pause = Math.min(2 * this.#pause, MAX_READOPT_PAUSE_MS)
  }

  #giveUp(error: Error): void {
    this.#lostAt = undefined
    this.#terminal?.abandon(error)
  }
}

/** The far side no longer has the terminal: its TTL passed, it was closed, or its session host restarted. */
function ended(key: string): SubprocessError {
  return new SubprocessError(
    'SESSION_HOST_LOST',
    `the link to the terminal ${JSON.stringify(key)} came back, but its session host no longer has it (its detached TTL passed or the session host restarted); open a new terminal`,
  )
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref())
}
