import type { SubprocessTerminalHandle } from 'dsh-subprocess'
import type { TerminalEarlierOutput, TerminalSendOperation, TerminalSendRead, TerminalSendRequest, TerminalSendResult } from 'dsh-terminal'
import { ShellSession } from './shell-session'

/**
 * A shell whose terminal's link can be lost and come back (a durable terminal on a remote target:
 * the provider's handle has `onLinkLost`). A send running when the link is lost ends at once with
 * the provider's `TARGET_UNREACHABLE` instead of by its timeout; it is released, not interrupted, so
 * the command goes on there and what it printed is the next result's earlier output once the
 * provider adopted the terminal again. The backend makes one only for a handle with `onLinkLost`;
 * any other is a plain {@link ShellSession}.
 */
export class LinkedShellSession extends ShellSession {
  readonly #linked: SubprocessTerminalHandle

  /** As {@link ShellSession}'s constructor. */
  constructor(...args: ConstructorParameters<typeof ShellSession>) {
    super(...args)
    this.#linked = args[0]
  }

  /** {@link ShellSession.startSend}, ended early with `TARGET_UNREACHABLE` when the link is lost meanwhile. */
  override startSend(request: TerminalSendRequest): TerminalSendOperation {
    const operation = super.startSend(request)
    const watch = this.#linked.onLinkLost
    if (!watch) return operation
    let settled = false
    let unsubscribe = () => {}
    const lost = new Promise<never>((_, reject) => {
      unsubscribe = watch.call(this.#linked, (error) => {
        if (settled) return
        settled = true
        // The loss first: releasing settles the send's own `done` at once, and the race takes whichever
        // settled first. No SIGINT: the command runs on where the terminal lives; its output waits for the next send.
        reject(error)
        this.release()
      })
    })
    const done = Promise.race([operation.done, lost]).finally(() => {
      settled = true
      unsubscribe()
    })
    return new LinkWatchedOperation(operation, done)
  }
}

/** The operation with a `done` that the link's loss may end first. */
class LinkWatchedOperation implements TerminalSendOperation {
  constructor(
    readonly operation: TerminalSendOperation,
    readonly done: Promise<TerminalSendResult>,
  ) {}

  get released(): Promise<void> | undefined {
    return this.operation.released
  }

  get earlier(): TerminalEarlierOutput | undefined {
    return this.operation.earlier
  }

  readOutput(): TerminalSendRead {
    return this.operation.readOutput()
  }

  cancel(): boolean {
    return this.operation.cancel()
  }
}
