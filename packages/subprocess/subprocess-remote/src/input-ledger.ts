/** Input a durable terminal keeps to resend after a cut: the most recent bytes, up to this many. */
export const INPUT_RETAIN_BYTES = 64 * 1024

/** What a re-adoption finds when it compares what was sent with what arrived. */
export type InputGap =
  | { readonly kind: 'none' }
  | { readonly kind: 'resend'; readonly bytes: Buffer }
  /** More was lost than is kept: `lostBytes` of input never reached the terminal and cannot be resent. */
  | { readonly kind: 'lost'; readonly lostBytes: number }

/**
 * The input a durable terminal on a link sent, by absolute offset, with its most recent
 * {@link INPUT_RETAIN_BYTES} kept: input frames have no reply, so a link cut while they were in
 * flight loses them unseen, and the adoption that follows says how many bytes the far side took
 * (`inputOffset`, feature `input-offsets`). What it did not take is sent again, once and in order.
 */
export class InputLedger {
  readonly #pieces: Buffer[] = []
  /** Absolute offset of the first byte of `#pieces`. */
  #start: number
  #end: number

  /** A ledger whose next byte has absolute offset `offset` (0 for a spawn; an adoption's `inputOffset`). */
  constructor(offset: number) {
    this.#start = offset
    this.#end = offset
  }

  /** Offset one past the last byte sent. */
  get sent(): number {
    return this.#end
  }

  /** `bytes` were sent (the ledger keeps its own reference: callers must not reuse the buffer). */
  record(bytes: Buffer): void {
    if (bytes.length === 0) return
    this.#pieces.push(bytes)
    this.#end += bytes.length
    // Kept bytes are #end - #start: drop the oldest piece while the rest still holds the bound.
    while (this.#end - this.#start - (this.#pieces[0]?.length ?? 0) >= INPUT_RETAIN_BYTES) this.#start += this.#pieces.shift()!.length
  }

  /**
   * The far side took `taken` bytes so far: what to send again, and from then on the ledger counts
   * from there. A count past what was sent (another client wrote meanwhile) moves the ledger up.
   */
  reconcile(taken: number): InputGap {
    if (taken >= this.#end) {
      this.#restart(taken)
      return { kind: 'none' }
    }
    if (taken < this.#start) {
      const lostBytes = this.#end - taken
      this.#restart(taken)
      return { kind: 'lost', lostBytes }
    }
    const bytes = Buffer.concat(this.#pieces).subarray(taken - this.#start)
    this.#restart(taken)
    return { kind: 'resend', bytes }
  }

  #restart(offset: number): void {
    this.#pieces.length = 0
    this.#start = offset
    this.#end = offset
  }
}
