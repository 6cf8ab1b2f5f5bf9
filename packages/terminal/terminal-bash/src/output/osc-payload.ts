import { parseContinuationMarker, parsePromptMarker, parseReplMarker } from './marker'
import type { PromptMarkerPayload } from './types'

/** OSC payload bytes kept: enough for every marker; a longer payload is no marker. */
const OSC_CAPACITY = 32

/**
 * The payload of the OSC string being read, kept (bounded) because it may be a prompt marker;
 * every other control string is dropped without keeping anything.
 */
export class OscPayload {
  readonly #bytes = new Uint8Array(OSC_CAPACITY)
  #length = 0
  #overflow = false

  /** Start an empty payload. */
  reset(): void {
    this.#length = 0
    this.#overflow = false
  }

  /** One payload byte; past the capacity the payload only remembers that it overflowed. */
  push(byte: number): void {
    if (this.#length < OSC_CAPACITY) this.#bytes[this.#length++] = byte
    else this.#overflow = true
  }

  /** The marker the payload carries (the shell's prompt, its continuation, a REPL's prompt), if any. */
  marker(): PromptMarkerPayload | undefined {
    if (this.#overflow) return undefined
    const status = parsePromptMarker(this.#bytes, this.#length)
    if (status !== undefined) return { kind: 'prompt', status }
    const nonce = parseContinuationMarker(this.#bytes, this.#length)
    if (nonce !== undefined) return { kind: 'continuation', nonce }
    const repl = parseReplMarker(this.#bytes, this.#length)
    return repl && { kind: 'repl', nonce: repl.nonce, repl: { pid: repl.pid, promptLength: repl.promptLength, name: repl.name } }
  }
}
