import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'

/**
 * Tells a client's disconnect apart from a cancelled call. The MCP SDK aborts every in-flight
 * handler's signal when its transport closes, exactly as for `notifications/cancelled`, and
 * `terminal_send` turns an abort into SIGINT: a disconnect would interrupt the command the client
 * left running. The SDK calls the transport's own `onclose` (set before `server.connect`) before it
 * aborts, so the end is known first and the tools' signals stop following the SDK's from then on.
 */
export class ConnectionEnd {
  #closing = false

  /** Set the transport's `onclose`; call before `server.connect(transport)`, which chains it. */
  watch(transport: Transport): void {
    const previous = transport.onclose
    transport.onclose = () => {
      this.#closing = true
      previous?.()
    }
  }

  /** True once the transport closed. */
  get closing(): boolean {
    return this.#closing
  }

  /** A signal for a tool call: aborted with the SDK's (a cancellation), never by the connection's end. */
  follow(sdk: AbortSignal): AbortSignal {
    const controller = new AbortController()
    const forward = () => {
      if (!this.#closing) controller.abort(sdk.reason)
    }
    if (sdk.aborted) forward()
    else sdk.addEventListener('abort', forward, { once: true })
    return controller.signal
  }
}
