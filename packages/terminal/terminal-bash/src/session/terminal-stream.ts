import type { TerminalSize } from 'dsh-terminal'
import { type PartialLine, type PromptMarker, PromptTracker, type SanitizedChunk, ScrollbackRing, TerminalSanitizer } from '../output/index'
import { decodeMarkerStatus } from '../prompt-protocol'
import { now } from '../readiness/timers'
import type { ScreenModel } from '../screen/screen-model'

/** Receives every sanitized chunk after the scrollback and the prompt tracker took it. */
export type ChunkSink = (chunk: SanitizedChunk, gapMs: number) => void

/** Bounds and prompt of one {@link TerminalStream}. */
export interface TerminalStreamOptions {
  /** Completed lines retained. */
  readonly scrollbackLines: number
  /** UTF-8 bytes retained. */
  readonly scrollbackMaxBytes: number
  /** The controlled prompt the tracker compares against. */
  readonly prompt: string
  /** The controlled continuation prompt (PS2), compared after a continuation marker. */
  readonly continuationPrompt: string
  /** The session's marker nonce: only markers carrying it count. */
  readonly nonce: number
  /** The nonce a REPL started in this session prints in its prompt marker (another number than the shell's). */
  readonly replNonce?: number
  /** The session's screen: it takes every raw chunk before the chunk is delivered. */
  readonly screen?: ScreenModel
  /** The window size the session starts with (the line view counts screen rows on it); default 40 × 160. */
  readonly size?: TerminalSize
}

/**
 * One session's output pipeline: raw PTY bytes → sanitizer → the screen model (which parses them only
 * when needed), then scrollback, prompt tracker and the active send. It also counts arrivals, which is what "silence" is measured on: the time output
 * reached us, never the time some consumer got around to reading it. O(chunk) per chunk.
 */
export class TerminalStream {
  readonly #sanitizer: TerminalSanitizer
  readonly #scrollback: ScrollbackRing
  readonly #prompt: PromptTracker
  readonly #nonce: number
  readonly #replNonce: number | undefined
  readonly #screen: ScreenModel | undefined
  #arrivals = 0
  #markers = 0
  #markerStatus: number | undefined
  #lastArrivalAt = Number.NEGATIVE_INFINITY
  #sink: ChunkSink | undefined
  #ended = false

  /** Creates an empty stream at the start of a session. */
  constructor(options: TerminalStreamOptions) {
    this.#sanitizer = new TerminalSanitizer(options.size ? { rows: options.size.rows, cols: options.size.cols } : {})
    this.#scrollback = new ScrollbackRing({ maxLines: options.scrollbackLines, maxBytes: options.scrollbackMaxBytes })
    this.#prompt = new PromptTracker(options.prompt, options.continuationPrompt)
    this.#nonce = options.nonce
    this.#replNonce = options.replNonce
    this.#screen = options.screen
  }

  /** Number of chunks that arrived so far; a changed value means "something arrived". */
  get arrivals(): number {
    return this.#arrivals
  }

  /** Monotonic time of the latest arrival (−∞ before the first). */
  get lastArrivalAt(): number {
    return this.#lastArrivalAt
  }

  /** The live current line (the send buffer starts from it). */
  get line(): PartialLine {
    return this.#sanitizer.line
  }

  /**
   * This session's latest marker is followed by exactly its prompt, cursor at its end: the primary
   * prompt, or the continuation prompt (see {@link TerminalStream.promptKind}). Either way the
   * shell printed it because it reads the next line.
   */
  get promptReady(): boolean {
    return this.promptKind !== undefined
  }

  /**
   * Which prompt the cursor sits after (see {@link TerminalStream.promptReady}), if any: the shell's
   * own, its continuation, or a REPL's that carries this session's REPL nonce.
   */
  get promptKind(): 'prompt' | 'continuation' | 'repl' | undefined {
    const marker = this.#prompt.marker
    if (!marker || !this.#prompt.ready) return undefined
    if (marker.kind === 'continuation') return marker.nonce === this.#nonce ? 'continuation' : undefined
    if (marker.kind === 'repl') return this.#replNonce !== undefined && marker.nonce === this.#replNonce ? 'repl' : undefined
    return this.exitStatus === undefined ? undefined : 'prompt'
  }

  /** The REPL whose prompt the cursor sits after (its pid and name), when {@link TerminalStream.promptKind} is `repl`. */
  get replPrompt(): { readonly pid: number; readonly name: string } | undefined {
    const marker = this.#prompt.marker
    return this.promptKind === 'repl' && marker?.kind === 'repl' ? marker.repl : undefined
  }

  /**
   * A full-screen program switched to the alternate screen and has not switched back: told by the
   * sanitizer at arrival, in step with every other fact of the stream (the emulator parses later).
   * Both track the same switches (`CSI ? 47/1047/1049 h/l`), so they agree once it caught up.
   */
  get alternateScreen(): boolean {
    return this.#sanitizer.alternateScreen
  }

  /**
   * Row-changing cursor moves and scroll regions on the normal screen so far, a count that only
   * grows: a send that saw it grow shows the screen, since its lines are fragments of a drawing.
   */
  get verticalMoves(): number {
    return this.#sanitizer.verticalMoves
  }

  /** Exit status carried by the latest marker when it is this session's own primary one; else undefined. */
  get exitStatus(): number | undefined {
    return decodeMarkerStatus(this.#prompt.exitStatus, this.#nonce)
  }

  /** Markers of this session's own shell so far; never reset, so a send can tell which arrived after a moment it noted. */
  get markers(): number {
    return this.#markers
  }

  /**
   * The exit status of the latest own marker, when at least one arrived after the first `markers`
   * (a count read from {@link TerminalStream.markers} earlier); else undefined: an older status is
   * never passed off as a newer command's.
   */
  statusSince(markers: number): number | undefined {
    return this.#markers > markers ? this.#markerStatus : undefined
  }

  /** The line of the first marker in `chunk` that is this session's own primary prompt (not PS2, not a REPL's), if any. */
  ownPromptLine(chunk: SanitizedChunk): number | undefined {
    for (const marker of chunk.markers) if (this.#ownStatus(marker) !== undefined) return marker.line
    return undefined
  }

  /** The exit status `marker` carries when it is this session's own primary prompt marker; else undefined. */
  #ownStatus(marker: PromptMarker): number | undefined {
    return marker.kind === 'prompt' ? decodeMarkerStatus(marker.status, this.#nonce) : undefined
  }

  /** A marker of this session's shell arrived since the latest {@link TerminalStream.resetPrompt}. */
  get markerSeen(): boolean {
    return this.exitStatus !== undefined
  }

  /** Forget prompt evidence: only a marker that arrives later counts. */
  resetPrompt(): void {
    this.#prompt.reset()
  }

  /** Retained output. */
  get scrollback(): ScrollbackRing {
    return this.#scrollback
  }

  /** Route chunks to `sink` (the active send) until it is replaced or cleared. */
  attach(sink: ChunkSink | undefined): void {
    this.#sink = sink
  }

  /**
   * The PTY was resized: output from here on is laid out for `size`, in the line view and on the
   * screen alike (each changes size at this point of the byte stream).
   */
  resize(size: TerminalSize): void {
    this.#sanitizer.resize(size.rows, size.cols)
    this.#screen?.resize(size)
  }

  /** Take one chunk of raw output. */
  write(bytes: Uint8Array): void {
    if (this.#ended) return
    const at = now()
    const gap = at - this.#lastArrivalAt
    this.#arrivals += 1
    this.#lastArrivalAt = at
    const chunk = this.#sanitizer.write(bytes)
    // After the sanitizer: it tells whether a full-screen program holds the terminal after this chunk.
    this.#screen?.write(bytes, this.#sanitizer.alternateScreen)
    this.#deliver(chunk, gap)
  }

  /** The PTY ended: flush an incomplete sequence; later writes are ignored. */
  end(): void {
    if (this.#ended) return
    this.#ended = true
    this.#deliver(this.#sanitizer.end(), 0)
  }

  #deliver(chunk: SanitizedChunk, gap: number): void {
    this.#scrollback.append(chunk)
    this.#prompt.update(chunk)
    for (const marker of chunk.markers) {
      const status = this.#ownStatus(marker)
      if (status === undefined) continue
      this.#markers += 1
      this.#markerStatus = status
    }
    this.#sink?.(chunk, gap)
  }
}
