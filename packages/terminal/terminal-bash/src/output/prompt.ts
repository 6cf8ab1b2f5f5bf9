import type { PartialLine, PromptMarker, SanitizedChunk } from './types'

/**
 * Prompt evidence for readiness: after the latest prompt marker, is the rendered tail exactly the
 * controlled prompt (the continuation prompt after a continuation marker) with the cursor right after it?
 *
 * The test is on rendered coordinates, carried across chunks: the marker's line must still be
 * the current line, and the text from the marker's column to the end of the line must equal the
 * prompt. Any echo or output after the prompt (a longer tail, or a newline that ends the line)
 * disqualifies it, so a delayed earlier prompt followed by input cannot pass. Costs O(prompt).
 */
export class PromptTracker {
  readonly #prompt: Expected
  readonly #continuationPrompt: Expected
  #marker: PromptMarker | undefined
  #ready = false

  /**
   * @param prompt - the exact controlled prompt, e.g. `dsh> `.
   * @param continuationPrompt - the exact text after a continuation marker (PS2), e.g. `> `; default the prompt.
   */
  constructor(prompt: string, continuationPrompt = prompt) {
    if (prompt.length === 0 || continuationPrompt.length === 0) throw new RangeError('prompt must not be empty')
    this.#prompt = { text: prompt, length: [...prompt].length }
    this.#continuationPrompt = { text: continuationPrompt, length: [...continuationPrompt].length }
  }

  /** Whether the latest marker is followed by exactly the prompt and nothing else. */
  get ready(): boolean {
    return this.#ready
  }

  /** The latest marker since construction or the last {@link PromptTracker.reset}. */
  get marker(): PromptMarker | undefined {
    return this.#marker
  }

  /** The number the latest primary prompt's marker carries (the last command's `$?`, encoded); undefined when the latest marker is none. */
  get exitStatus(): number | null | undefined {
    return this.#marker?.kind === 'prompt' ? this.#marker.status : undefined
  }

  /** Account for one sanitized chunk; returns {@link PromptTracker.ready}. */
  update(chunk: SanitizedChunk): boolean {
    const latest = chunk.markers[chunk.markers.length - 1]
    if (latest !== undefined) this.#marker = latest
    this.#ready = this.#evaluate(chunk.line)
    return this.#ready
  }

  /** Forget the marker, e.g. when a send writes its input: only a later marker may count. */
  reset(): void {
    this.#marker = undefined
    this.#ready = false
  }

  #evaluate(line: PartialLine): boolean {
    const marker = this.#marker
    if (marker === undefined || marker.line !== line.number) return false
    if (marker.column < line.base || line.cursor !== line.length) return false
    // A REPL's marker says how long its prompt is: exactly that much may follow it.
    if (marker.kind === 'repl') return line.length - marker.column === marker.repl.promptLength
    const prompt = marker.kind === 'continuation' ? this.#continuationPrompt : this.#prompt
    if (line.length - marker.column !== prompt.length) return false
    return line.tail(prompt.length) === prompt.text
  }
}

/** A prompt text and its length in code points (what the line's coordinates count). */
interface Expected {
  readonly text: string
  readonly length: number
}
