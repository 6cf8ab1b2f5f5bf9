import { errorMessage } from 'dsh-basics'
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
 * before it and the tap exactly the bytes after. A listener that throws loses its tap, not the session:
 * the tap ends (its `onEnd` hears why), so its view stops counting as attached.
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
    if (this.#taps.size === 0) return
    for (const tap of this.#taps) {
      try {
        tap.onOutput(bytes)
      } catch (error) {
        this.#taps.delete(tap)
        endQuietly(tap, `the watcher failed on output: ${errorMessage(error)}`)
      }
    }
  }

  /** The session exited or closed: every tap hears `reason` once, and later taps end at once. */
  end(reason: string): void {
    if (this.#ended !== undefined) return
    this.#ended = reason
    const taps = [...this.#taps]
    this.#taps.clear()
    for (const tap of taps) endQuietly(tap, reason)
  }
}

/** Tell `tap` it ended; a listener that throws is the watcher's problem, and the others still hear it. */
function endQuietly(tap: Tap, reason: string): void {
  try {
    tap.onEnd(reason)
  } catch {
    // Nothing left to tell it.
  }
}
