import { MAX_TERMINAL_FACTS_BYTES, type SubprocessTerminalHandle } from 'dsh-subprocess'
import { utf8ByteLength } from 'dsh-basics'
import type { TerminalInputState, TerminalSize } from 'dsh-terminal'
import { serializeFacts } from './durable-facts'

/** What the ledger's facts carry besides offsets: fixed per session. */
export interface LedgerIdentity {
  readonly nonce: number
  readonly replNonce?: number | undefined
  readonly term?: string | undefined
  readonly name?: string | undefined
}

/**
 * A session's place in its terminal's output, for durability: bytes taken (absolute offsets, an
 * adopted terminal's counted from its replay's start), where an adoption's replay stops being
 * already-delivered output, and the facts stored after each delivered result.
 */
export class OutputLedger {
  #bytes: number
  #replayUntil: number | undefined
  #shellGroup: number | undefined
  /** What the terminal waited for when the last send settled: a host listing the session detached shows it. */
  #input: TerminalInputState | undefined

  constructor(
    private readonly handle: Pick<SubprocessTerminalHandle, 'setFacts'>,
    private readonly identity: LedgerIdentity,
    outputFrom = 0,
  ) {
    this.#bytes = outputFrom
  }

  /** Replayed bytes before `delivered` were shown already; false when the replay starts after it (all of it is news). */
  replayUntil(delivered: number): boolean {
    if (this.#bytes >= delivered) return false
    this.#replayUntil = delivered
    return true
  }

  /** The pinned shell group, kept for an adopter to pin again. */
  pinned(processGroupId: number): void {
    this.#shellGroup = processGroupId
  }

  /**
   * Count a chunk and pass it on: whole to `feed`, or, where an adoption's replay crosses the
   * delivered end, the part before it to `feed`, then `news()`, then the rest.
   */
  take(chunk: Uint8Array, feed: (bytes: Uint8Array) => void, news: () => void): void {
    const start = this.#bytes
    this.#bytes += chunk.length
    const until = this.#replayUntil
    if (until === undefined || this.#bytes <= until) return feed(chunk)
    this.#replayUntil = undefined
    const at = until - start
    if (at > 0) feed(chunk.subarray(0, at))
    news()
    feed(at > 0 ? chunk.subarray(at) : chunk)
  }

  /**
   * A send settled: what it ended on is the input state an adopter lists (none when its end proved
   * none, so an older state is not shown for a command that may be running), then as {@link delivered}.
   */
  settled(size: TerminalSize, input: TerminalInputState | undefined): void {
    this.#input = input
    this.delivered(size)
  }

  /** A result was delivered: a durable terminal keeps what an adopter needs, with the offset it ended at. */
  delivered(size: TerminalSize): void {
    const setFacts = this.handle.setFacts
    if (!setFacts) return
    const { nonce, replNonce, term, name } = this.identity
    const facts = {
      v: 1 as const,
      nonce,
      replNonce,
      delivered: this.#bytes,
      rows: size.rows,
      cols: size.cols,
      term,
      shellGroup: this.#shellGroup,
      name,
      input: this.#input,
    }
    const text = serializeFacts(facts)
    // A few hundred bytes; the bound is the provider's, checked here so a stored value is never refused.
    if (utf8ByteLength(text) > MAX_TERMINAL_FACTS_BYTES) return
    // Best effort: a session host that went away is reported by the next operation, not here.
    try {
      setFacts.call(this.handle, text)
    } catch {}
  }
}
