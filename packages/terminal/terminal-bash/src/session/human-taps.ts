import type { TerminalBackendTap } from 'dsh-terminal'

/** What a tap renders first: the screen so far, as output that redraws it. */
export interface ReplaySource {
  /** Every byte handed over before the call, rendered as terminal output (see `ScreenModel.replay`). */
  replay(): Promise<string>
}

interface Tap {
  readonly onOutput: (bytes: Uint8Array) => void
  readonly onEnd: (reason: string) => void
}

/**
 * The people watching one session: each tap starts from the rendered screen and then receives
 * every raw chunk, in order. A tap opens between two chunks, so the replay covers exactly the bytes
 * before it and the tap exactly the bytes after. A listener that throws loses its tap, not the session.
 */
export class HumanTaps {
  readonly #taps = new Set<Tap>()
  #ended: string | undefined

  constructor(private readonly source: ReplaySource) {}

  /** Open a tap; after the session ended it ends at once (asynchronously) with the session's reason. */
  open(onOutput: (bytes: Uint8Array) => void, onEnd: (reason: string) => void): TerminalBackendTap {
    const tap: Tap = { onOutput, onEnd }
    const ended = this.#ended
    if (ended !== undefined) {
      queueMicrotask(() => onEnd(ended))
      return { screen: Promise.resolve(''), close: () => {} }
    }
    this.#taps.add(tap)
    return { screen: this.source.replay(), close: () => this.#taps.delete(tap) }
  }

  /** A raw chunk the PTY printed, after the screen model was handed it. */
  deliver(bytes: Uint8Array): void {
    for (const tap of this.#taps) {
      try {
        tap.onOutput(bytes)
      } catch {
        this.#taps.delete(tap)
      }
    }
  }

  /** The session exited or closed: every tap hears `reason` once, and later taps end at once. */
  end(reason: string): void {
    if (this.#ended !== undefined) return
    this.#ended = reason
    const taps = [...this.#taps]
    this.#taps.clear()
    for (const tap of taps) {
      try {
        tap.onEnd(reason)
      } catch {
        // The watcher's problem; the others still hear it.
      }
    }
  }

  /** True while someone watches. */
  get watched(): boolean {
    return this.#taps.size > 0
  }
}
