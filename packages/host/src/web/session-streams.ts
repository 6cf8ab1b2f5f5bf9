import { randomUUID } from 'node:crypto'
import type { ServerResponse } from 'node:http'
import type { TerminalHumanView } from 'dsh-terminal'
import { HUMAN_CLIENTS, type HumanGateway } from '../human/gateway'
import { MAX_UNREAD_BYTES } from '../human/limits'
import { toBase64 } from '../human/protocol'
import { WebRequestError } from './http-io'

/** What the first event of a stream tells the page: its view id, the screen to draw and who writes. */
export interface ScreenEvent {
  readonly viewId: string
  readonly sessionId: string
  /** ANSI that redraws the current screen on a cleared terminal of rows×cols. */
  readonly screen: string
  readonly rows: number
  readonly cols: number
  readonly writing: boolean
}

/** Size used when a session reports none (it has no terminal window). */
const FALLBACK_SIZE = { rows: 24, cols: 80 }

interface OpenStream {
  readonly sessionId: string
  readonly view: TerminalHumanView
  /** The response the stream is written to. */
  readonly res: ServerResponse
}

/**
 * The open Server-Sent-Events streams, one per person's view: the first event redraws the screen,
 * then raw output follows in order (base64), then one `end`. A closed connection closes its view,
 * so nobody keeps counting as attached or keeps the writer role after leaving.
 */
export class SessionStreams {
  readonly #streams = new Map<string, OpenStream>()

  constructor(
    private readonly gateway: HumanGateway,
    private readonly log: (line: string) => void,
  ) {}

  /** Attach to `sessionId` and stream it on `res`; rejects (before any byte is written) when the session cannot be watched. */
  async open(sessionId: string, res: ServerResponse): Promise<void> {
    const viewId = randomUUID()
    const send = (event: string, data: string): void => {
      if (res.writableEnded || res.destroyed) return
      res.write(`event: ${event}\ndata: ${data}\n\n`)
      // A viewer that lets this much pile up unread is cut off (its view closes; the page reconnects).
      if (res.writableLength > MAX_UNREAD_BYTES) {
        this.log(`web view: viewer of ${sessionId} fell ${res.writableLength} bytes behind; closing its stream`)
        res.destroy()
      }
    }
    const finish = (reason: string): void => {
      send('end', JSON.stringify({ reason }))
      res.end()
    }
    let hungUp = false
    res.once('close', () => {
      hungUp = true
    })
    // The view holds output (and an end) until the attach resolved, so the screen event goes first.
    const view = await this.gateway.attach(sessionId, { onOutput: (bytes) => send('output', toBase64(bytes)), onEnd: finish }, HUMAN_CLIENTS.web)
    if (hungUp || res.destroyed) {
      view.close() // the viewer left while the screen was being rendered
      return
    }
    this.#streams.set(viewId, { sessionId, view, res })
    res.on('close', () => {
      this.#streams.delete(viewId)
      view.close()
    })
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      connection: 'keep-alive',
    })
    const size = view.size ?? FALLBACK_SIZE
    const first: ScreenEvent = { viewId, sessionId, screen: view.screen, rows: size.rows, cols: size.cols, writing: view.writing }
    send('screen', JSON.stringify(first))
  }

  /** The view `viewId` of `sessionId`; `NO_VIEW` (404) when that stream is not open. */
  view(sessionId: string, viewId: unknown): TerminalHumanView {
    const stream = typeof viewId === 'string' ? this.#streams.get(viewId) : undefined
    if (!stream || stream.sessionId !== sessionId) {
      throw new WebRequestError(404, 'NO_VIEW', `no open view ${String(viewId)} of session ${sessionId}; reload the session`)
    }
    return stream.view
  }

  /** End every stream (closing their views): the server is going away. */
  closeAll(): void {
    const streams = [...this.#streams.values()]
    this.#streams.clear()
    for (const { view, res } of streams) {
      res.end()
      view.close()
    }
  }
}
