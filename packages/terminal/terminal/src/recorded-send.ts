import type { HumanPresence } from './human'
import type { TerminalSendHandle, TerminalSendOperation, TerminalSendResult } from './types'

/**
 * What a session's `startSend` hands out: the backend's operation, settled only once the session's
 * reservation is gone (`released`), its result carrying who else is at the terminal. Methods on a
 * class, no closures per send: a send is the hottest path of a session.
 */
export class RecordedSend implements TerminalSendHandle {
  readonly done: Promise<TerminalSendResult>
  readonly released: Promise<void>
  readonly earlier: TerminalSendOperation['earlier']
  readonly #operation: TerminalSendOperation

  private constructor(operation: TerminalSendOperation, released: Promise<void>, done: Promise<TerminalSendResult>) {
    this.#operation = operation
    this.released = released
    this.earlier = operation.earlier
    this.done = done
  }

  /** The handle of `operation`, whose reservation `released` drops; `human` is asked at settlement. */
  static of(operation: TerminalSendOperation, released: Promise<void>, human: HumanPresence): RecordedSend {
    return new RecordedSend(operation, released, settledAfterRelease(operation, released, human))
  }

  /** The same send with another `done` (the registry's, which tells a lost session host apart). */
  withDone(done: Promise<TerminalSendResult>): RecordedSend {
    return new RecordedSend(this.#operation, this.released, done)
  }

  readOutput(): ReturnType<TerminalSendOperation['readOutput']> {
    return this.#operation.readOutput()
  }

  cancel(): ReturnType<TerminalSendOperation['cancel']> {
    return this.#operation.cancel()
  }
}

/** The operation's result once the reservation is gone, so a caller that awaited it may send again at once. */
async function settledAfterRelease(operation: TerminalSendOperation, released: Promise<void>, human: HumanPresence): Promise<TerminalSendResult> {
  await released
  const result = await operation.done
  const presence = human.presence
  return presence === undefined ? result : { ...result, human: presence }
}
