import { Buffer } from 'node:buffer'
import { MAX_PIECE_WORK } from './emulator-rules'

/** What a finished writer holds: nothing, and a sink that takes nothing (made once, not per chunk). */
export const NO_BYTES = new Uint8Array(0)
const NO_SINK: GuardSink = () => {}

/** Receives the guarded output in order: a piece of bytes and the emulator work (in cells) its sequences cost beyond their bytes. */
export type GuardSink = (piece: Uint8Array, work: number) => void

/**
 * The guard's output for one chunk, assembled in order: stretches of the chunk that pass unchanged
 * (kept as views of it, no copy) and parts of its own (held sequences, rewrites). It hands them on
 * as one piece per chunk, or more when the work of the sequences in them passes
 * {@link MAX_PIECE_WORK}: xterm parses a piece without a break and yields only between pieces.
 */
export class GuardOutput {
  #input: Uint8Array = NO_BYTES
  #runStart = 0
  #runEnd = 0
  #parts: Uint8Array[] = []
  #work = 0
  #sink: GuardSink = NO_SINK

  /** Start on `input`; pieces go to `sink`. */
  begin(input: Uint8Array, sink: GuardSink): void {
    this.#input = input
    this.#sink = sink
    this.#runStart = this.#runEnd = 0
  }

  /** Hand on what is left of the chunk and let go of it. */
  end(): void {
    this.#flushRun()
    this.#emit()
    this.#input = NO_BYTES
    this.#sink = NO_SINK
  }

  /** Input bytes `[start, end)` pass on unchanged, after everything before them. */
  pass(start: number, end: number): void {
    if (this.#runEnd === start && this.#runEnd > this.#runStart) {
      this.#runEnd = end
      return
    }
    this.#flushRun()
    this.#runStart = start
    this.#runEnd = end
  }

  /** A part that is not a stretch of the input (a copy or a rewrite), after everything before it, costing `work`. */
  push(part: Uint8Array, work: number): void {
    this.#flushRun()
    this.#parts.push(part)
    this.addWork(work)
  }

  /** The bytes just passed or pushed cost `work` cells: past the bound, the piece is handed on now. */
  addWork(work: number): void {
    this.#work += work
    if (this.#work >= MAX_PIECE_WORK) {
      this.#flushRun()
      this.#emit()
    }
  }

  #flushRun(): void {
    if (this.#runEnd > this.#runStart) this.#parts.push(this.#input.subarray(this.#runStart, this.#runEnd))
    this.#runStart = this.#runEnd = 0
  }

  #emit(): void {
    const parts = this.#parts
    if (parts.length === 0) return
    const work = this.#work
    this.#parts = []
    this.#work = 0
    this.#sink(parts.length === 1 ? (parts[0] as Uint8Array) : Buffer.concat(parts), work)
  }
}
