import type { Readable, Writable } from 'node:stream'
import {
  describePeerValue,
  FrameChannel,
  INPUT_FRAMES_FEATURE,
  INPUT_OFFSETS_FEATURE,
  type HelloMessage,
  isPositiveInteger,
  type ReplyMessage,
  type RequestMethod,
  type RequestParams,
  type WireError,
} from 'dsh-session-host'
import { errorFromWire, requestTooLarge, sessionHostLost, targetUnreachable } from './errors'

/** How long a hang-up waits for the session host to close its side before it resolves anyway. */
export const HANG_UP_WAIT_MS = 2_000

/** What the client tells the terminals it holds. */
export interface ClientTerminal {
  /** Output at `offset`; false when it does not continue the stream. */
  output(offset: number, bytes: Buffer): boolean
  /** The top-level process ended after every output frame. */
  exited(exit: { exitCode: number | null; signal: NodeJS.Signals | null }): void
  /** The connection ended: the terminal is gone with the session host. */
  lost(error: Error): void
}

interface Pending {
  readonly resolve: (value: unknown) => void
  readonly reject: (error: Error) => void
  /** Runs synchronously when the reply is read, before any later frame of the same read. */
  readonly onResult?: ((result: unknown) => void) | undefined
}

/** How a {@link SessionHostClient} watches its link. */
export interface ClientOptions {
  /** Silence (with calls pending or terminals attached) before a ping, and the ping's deadline. */
  readonly livenessMs: number
  /**
   * How long the session host has for its hello: through a connect command that is a login, a relay
   * and maybe a session host starting (`startTimeoutMs`); the protocol's 5 s when absent.
   */
  readonly helloDeadlineMs?: number
  /**
   * Send writes as input frames whenever the session host offers them (no reply), as over the local
   * socket, where a lost connection means the session host died with the terminal. Without it, input
   * frames go only to a session host that also offers `input-offsets`: over a link that can be cut and
   * come back, a durable terminal resends what the cut lost once adopted again (see InputLedger), and
   * a session host without them gets `write` requests, each waiting for its reply.
   */
  readonly inputFrames?: boolean
}

/**
 * One protocol connection to a session host: the hello, requests with ids and their replies,
 * output and exit events routed to terminals by number, acks, and the loss of the connection,
 * which rejects every pending call with `SESSION_HOST_LOST` (it ended) or `TARGET_UNREACHABLE` (it
 * went silent and a liveness ping was not answered).
 */
export class SessionHostClient {
  readonly #channel: FrameChannel
  readonly #pending = new Map<number, Pending>()
  readonly #terminals = new Map<number, ClientTerminal>()
  readonly #report: (message: string) => void
  /** The session host's hello; rejects with `SESSION_HOST_LOST` (naming its refusal, if any) when the connection ends first. */
  readonly ready: Promise<HelloMessage>
  /** Resolves once the connection ended, after the pending calls were rejected. */
  readonly closed: Promise<void>
  readonly #input: Readable
  readonly #outputStream: Writable
  readonly #livenessMs: number
  #nextId = 1
  #nextNonce = 1
  #windowBytes = 1
  /** The session host takes input frames (feature `input-frames`). */
  #inputFrames = false
  #lost: Error | undefined
  #lastHeard = performance.now()
  #pingSentAt: number | undefined
  #livenessTimer: NodeJS.Timeout | undefined

  constructor(
    input: Readable,
    output: Writable,
    report: (message: string) => void,
    onClosed: () => void = () => {},
    options: ClientOptions = { livenessMs: 5_000 },
  ) {
    this.#report = report
    this.#input = input
    this.#outputStream = output
    this.#livenessMs = options.livenessMs
    let ready!: (hello: HelloMessage) => void
    let failed!: (error: Error) => void
    let closed!: () => void
    this.ready = new Promise((resolve, reject) => {
      ready = resolve
      failed = reject
    })
    this.ready.catch(() => {})
    this.closed = new Promise((resolve) => (closed = resolve))
    let peerError: string | undefined
    this.#channel = new FrameChannel(
      input,
      output,
      'client',
      {},
      {
        hello: (hello) => {
          this.#windowBytes = hello.windowBytes ?? 1
          // Over a link, only with input offsets: what a cut loses of them is known at re-adoption, and resent.
          this.#inputFrames =
            hello.features.includes(INPUT_FRAMES_FEATURE) && ((options.inputFrames ?? false) || hello.features.includes(INPUT_OFFSETS_FEATURE))
          ready(hello)
        },
        control: (message) => this.#control(message),
        output: (terminal, offset, bytes) => this.#output(terminal, offset, bytes),
        inputFailed: (terminal, code, message) => report(`the session host could not write input to terminal ${terminal}: ${code}: ${message}`),
        protocolError: (error) => report(`session host frame refused: ${error.code}: ${error.message}`),
        peerError: (code, message) => {
          peerError = `${code}: ${message}`
          report(`session host reported ${peerError}`)
        },
        closed: () => {
          clearTimeout(this.#livenessTimer)
          this.#lose(sessionHostLost(peerError ? `it refused the connection: ${peerError}` : 'the connection ended'))
          failed(this.#lost!)
          onClosed()
          closed()
        },
      },
      options.helloDeadlineMs,
    )
    // Any byte from the peer proves the link carries bytes: the liveness clock starts over.
    input.on('data', () => {
      this.#lastHeard = performance.now()
      this.#pingSentAt = undefined
    })
    this.#watchLiveness()
  }

  /**
   * Ping after `livenessMs` of silence while something waits for the peer (a pending call, an
   * attached terminal); no byte back within `livenessMs` more and the link is given up.
   */
  #watchLiveness(): void {
    if (this.#lost) return
    const now = performance.now()
    let wait = this.#livenessMs
    if (this.#pingSentAt !== undefined) {
      wait = this.#pingSentAt + this.#livenessMs - now
      if (wait <= 0) return this.#unreachable()
    } else if (this.#pending.size > 0 || this.#terminals.size > 0) {
      wait = this.#lastHeard + this.#livenessMs - now
      if (wait <= 0) {
        this.#pingSentAt = now
        this.#channel.send({ type: 'ping', nonce: this.#nextNonce++ })
        wait = this.#livenessMs
      }
    }
    this.#livenessTimer = setTimeout(() => this.#watchLiveness(), Math.max(1, wait))
    this.#livenessTimer.unref()
  }

  /** The link went silent: reject everything with `TARGET_UNREACHABLE` and drop the streams (a stuck peer would never read an orderly end). */
  #unreachable(): void {
    this.#lose(targetUnreachable(this.#livenessMs))
    this.#channel.close()
    this.#input.destroy()
    this.#outputStream.destroy()
  }

  /** Unacknowledged output per terminal before the session host pauses its PTY (from its hello; 1 before it). */
  get windowBytes(): number {
    return this.#windowBytes
  }

  /** Route a terminal's events to `terminal`. */
  attach(number: number, terminal: ClientTerminal): void {
    this.#terminals.set(number, terminal)
  }

  /** Stop routing a terminal's events (it was terminated). */
  detach(number: number): void {
    this.#terminals.delete(number)
  }

  /**
   * Call `method`; `onId` learns the request id (to cancel it), `onResult` sees a successful result
   * synchronously (a spawn attaches its terminal there, before the frames that follow the reply).
   * Rejects with `SESSION_HOST_LOST` when the connection ends first, `INVALID_SPEC` (nothing sent) when it does not fit a frame.
   */
  request<M extends RequestMethod>(method: M, params: RequestParams[M], onId?: (id: number) => void, onResult?: (result: unknown) => void): Promise<unknown> {
    if (this.#lost) return Promise.reject(this.#lost)
    const id = this.#nextId++
    onId?.(id)
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, onResult })
      const unframed = this.#channel.sendOrRefuse({ type: 'request', id, method, params })
      if (unframed === undefined) return
      this.#pending.delete(id)
      reject(requestTooLarge(method, unframed))
    })
  }

  /** Abort pending request `id` (a spawn). */
  cancel(id: number): void {
    this.#channel.send({ type: 'cancel', id })
  }

  /**
   * Write `bytes` to `terminal` without a round trip when the session host takes input frames (in
   * order with requests); false when it does not, and the caller sends a `write` request instead.
   */
  sendInput(terminal: number, bytes: Buffer): boolean {
    if (!this.#inputFrames || this.#lost) return false
    this.#channel.sendInput(terminal, bytes)
    return true
  }

  /** Tell the session host what of `terminal` was delivered. */
  acknowledge(terminal: number, offset: number): void {
    this.#channel.send({ type: 'ack', terminal, offset })
  }

  /**
   * Hang up; the session host terminates this connection's terminals (detaches the durable ones).
   * Resolves once the session host closed its side too (at most {@link HANG_UP_WAIT_MS} later): by then
   * it has detached them, so another host that looks next finds them detached, not still held.
   */
  async close(): Promise<void> {
    this.#channel.close()
    const input = this.#input
    if (!input.readableEnded && !input.destroyed) {
      let done!: () => void
      const ended = new Promise<void>((resolve) => (done = resolve))
      const events = ['end', 'close', 'error'] as const
      for (const event of events) input.once(event, done)
      const timer = setTimeout(done, HANG_UP_WAIT_MS)
      // Read on (and drop) whatever still comes: a paused stream never reports its end.
      input.resume()
      await ended
      clearTimeout(timer)
      for (const event of events) input.off(event, done)
    }
    return this.closed
  }

  #control(message: { readonly type: string; readonly [field: string]: unknown }): void {
    if (message.type === 'reply') return this.#reply(message as unknown as ReplyMessage)
    // The answer to a liveness ping: hearing it already restarted the clock.
    if (message.type === 'pong') return
    if (message.type === 'exit') {
      const terminal = isPositiveInteger(message.terminal) ? this.#terminals.get(message.terminal) : undefined
      if (!terminal) return this.#report(`exit for unknown terminal ${describePeerValue(message.terminal)}`)
      return terminal.exited(message.exit as { exitCode: number | null; signal: NodeJS.Signals | null })
    }
    this.#report(`unexpected message of type ${describePeerValue(message.type)} from the session host`)
  }

  #reply(reply: ReplyMessage): void {
    const pending = isPositiveInteger(reply.id) ? this.#pending.get(reply.id) : undefined
    if (!pending) {
      // Out of order or unknown: reported (UNEXPECTED_FRAME), never taken as another call's answer.
      this.#channel.send({ type: 'error', code: 'UNEXPECTED_FRAME', message: `a reply to request ${describePeerValue(reply.id)}, which is not pending` })
      return this.#report(`UNEXPECTED_FRAME: reply to request ${describePeerValue(reply.id)}, which is not pending`)
    }
    this.#pending.delete(reply.id)
    if (reply.ok) {
      pending.onResult?.(reply.result)
      pending.resolve(reply.result)
    } else pending.reject(errorFromWire(reply.error ?? ({ code: 'SESSION_HOST_ERROR', message: 'a failed reply without an error' } as WireError)))
  }

  #output(number: number, offset: number, bytes: Buffer): void {
    const terminal = this.#terminals.get(number)
    if (!terminal) return this.#report(`output for unknown terminal ${number}`)
    if (!terminal.output(offset, bytes)) {
      this.#report(`output of terminal ${number} at ${offset} does not continue its stream; closing the connection`)
      this.#channel.close()
    }
  }

  #lose(error: Error): void {
    if (this.#lost) return
    this.#lost = error
    for (const pending of this.#pending.values()) pending.reject(this.#lost)
    this.#pending.clear()
    for (const terminal of this.#terminals.values()) terminal.lost(this.#lost)
    this.#terminals.clear()
  }
}
