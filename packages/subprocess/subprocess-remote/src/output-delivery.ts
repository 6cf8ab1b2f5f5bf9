import type { TerminalOutputListener } from 'dsh-subprocess'

/**
 * How long delivered bytes below `ackEveryBytes` may wait for their ack: a send's few hundred bytes
 * need none of their own (the window is far away), so an interactive round trip costs the session
 * host no extra wakeup, while a quiet terminal's ring still learns what was delivered soon.
 */
export const ACK_DELAY_MS = 50

/** Hooks of an {@link OutputDelivery}. */
export interface OutputDeliveryOptions {
  /** Tell the session host that everything before `offset` was delivered. */
  readonly acknowledge: (offset: number) => void
  /** Acknowledge at once once this many delivered bytes are unacknowledged (else within {@link ACK_DELAY_MS}). */
  readonly ackEveryBytes: number
  /** A listener threw; delivery to the others continues. */
  readonly report: (error: unknown) => void
  /** Offset of the first byte that will arrive (an adoption's `replayFrom`; 0 for a spawn). */
  readonly from?: number
}

/**
 * A remote terminal's output on the client: ordered delivery to listeners, the chunks that arrived
 * before the first listener held for it (and not acknowledged, so the session host's window pauses
 * the PTY as the in-process backlog does), and acks by offset for what was delivered.
 */
export class OutputDelivery {
  readonly #options: OutputDeliveryOptions
  #listeners: readonly TerminalOutputListener[] = []
  /** Chunks held for the first listener, each with the offset one past its last byte. */
  #backlog: HeldChunk[] | undefined = []
  /** Offset one past the last byte handed to listeners (or dropped as seen): what acks may claim. */
  #delivered = 0
  /** Offset one past the last byte received. */
  #received = 0
  #acknowledged = 0
  #ackTimer: NodeJS.Timeout | undefined
  /** After a re-adoption: bytes before this offset were delivered (or are held) already and are dropped from the replay. */
  #seenUntil = 0

  constructor(options: OutputDeliveryOptions) {
    this.#options = options
    this.#delivered = this.#received = this.#acknowledged = options.from ?? 0
  }

  /** Take the bytes at `offset`; false when they do not continue the stream (a protocol fault). */
  push(offset: number, chunk: Buffer): boolean {
    if (offset !== this.#received) return false
    this.#received += chunk.length
    if (offset < this.#seenUntil) {
      // Replayed bytes this side delivered: acknowledged again on the new connection, not delivered again.
      const seen = Math.min(chunk.length, this.#seenUntil - offset)
      this.#advanceTo(offset + seen)
      if (seen === chunk.length) return true
      chunk = chunk.subarray(seen)
    }
    if (this.#backlog) {
      this.#backlog.push({ chunk, end: this.#received })
      return true
    }
    this.#deliver(chunk, this.#received)
    return true
  }

  /**
   * The terminal was adopted again on a new connection whose replay starts at `from`: the part of it
   * delivered before is dropped, so nothing is delivered twice. Chunks still held for the first
   * listener are held only up to `from` (the replay brings the rest again, to be held once). Answers
   * how many bytes were lost (the session host's ring no longer held them; 0 normally).
   */
  rebase(from: number): number {
    const lost = Math.max(0, from - this.#received)
    // Held bytes were received, not delivered: the replay's copy of them is held instead of the old one.
    this.#seenUntil = Math.max(this.#delivered, from)
    if (this.#backlog) this.#backlog = heldBefore(this.#backlog, from)
    // The new connection counts from the replay: acknowledgements start over there.
    this.#received = this.#delivered = this.#acknowledged = from
    clearTimeout(this.#ackTimer)
    this.#ackTimer = undefined
    return lost
  }

  /** Add a listener; the first one receives the held chunks before this returns. */
  subscribe(listener: TerminalOutputListener): () => void {
    if (!this.#listeners.includes(listener)) this.#listeners = [...this.#listeners, listener]
    const backlog = this.#backlog
    if (backlog) {
      this.#backlog = undefined
      for (const held of backlog) this.#deliver(held.chunk, held.end)
    }
    return () => {
      this.#listeners = this.#listeners.filter((other) => other !== listener)
    }
  }

  /** Hand `chunk`, which ends at offset `end`, to every listener. */
  #deliver(chunk: Buffer, end: number): void {
    for (const listener of this.#listeners) {
      try {
        listener(chunk)
      } catch (error) {
        this.#options.report(error)
      }
    }
    this.#advanceTo(end)
  }

  /**
   * Everything before `end` was handed over (or dropped as seen): acknowledge at once past the
   * threshold, else within {@link ACK_DELAY_MS}. An offset not past the delivered one changes
   * nothing (a held chunk from before a re-adoption that started later): acks never run ahead.
   */
  #advanceTo(end: number): void {
    if (end <= this.#delivered) return
    this.#delivered = end
    if (this.#delivered - this.#acknowledged >= this.#options.ackEveryBytes) this.#flushAck()
    else if (this.#ackTimer === undefined) {
      this.#ackTimer = setTimeout(() => this.#flushAck(), ACK_DELAY_MS)
      this.#ackTimer.unref()
    }
  }

  #flushAck(): void {
    clearTimeout(this.#ackTimer)
    this.#ackTimer = undefined
    if (this.#delivered <= this.#acknowledged) return
    this.#acknowledged = this.#delivered
    this.#options.acknowledge(this.#delivered)
  }
}

/** A chunk held for the first listener, and the offset one past its last byte. */
interface HeldChunk {
  readonly chunk: Buffer
  readonly end: number
}

/** The held chunks cut at offset `from`: what lies before it (the replay from `from` resends the rest). */
function heldBefore(backlog: readonly HeldChunk[], from: number): HeldChunk[] {
  const kept: HeldChunk[] = []
  for (const held of backlog) {
    const start = held.end - held.chunk.length
    if (start >= from) break
    kept.push(held.end <= from ? held : { chunk: held.chunk.subarray(0, from - start), end: from })
  }
  return kept
}
