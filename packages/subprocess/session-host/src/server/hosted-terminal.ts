import type { DurableTerminalSpec, SubprocessTerminalHandle, TerminalExit } from 'dsh-subprocess'
import type { FrameChannel } from '../protocol/channel'
import { OutputRing } from './output-ring'
import type { TerminalSlot } from './terminal-table'

/** A provider's handle that can stop reading its PTY (dsh-subprocess-local's `LocalTerminal`). */
interface PausableHandle extends SubprocessTerminalHandle {
  pauseOutput(): void
  resumeOutput(): void
}

function isPausable(handle: SubprocessTerminalHandle): handle is PausableHandle {
  const candidate = handle as Partial<PausableHandle>
  return typeof candidate.pauseOutput === 'function' && typeof candidate.resumeOutput === 'function'
}

/** Where a terminal's events go while a connection holds it. */
interface Sink {
  readonly channel: FrameChannel
  readonly id: number
}

/**
 * One terminal of the session host: forwards its output with absolute offsets to the connection
 * that holds it, keeps what was not acknowledged (and, when durable, its newest bytes) in an
 * {@link OutputRing}, pauses the PTY when the unacknowledged bytes reach the window and resumes it on
 * acks, and reports the exit after the last output frame. A durable one can be detached (no
 * connection: the PTY is read on, into the ring) and attached again to an adopter.
 */
export class HostedTerminal {
  readonly #ring: OutputRing
  readonly #windowBytes: number
  #sink: Sink | undefined
  #paused = false
  #exit: TerminalExit | undefined
  /** What the last client stored with `setFacts`. */
  facts = ''
  /** Input bytes written to it so far, by every connection that held it (an adoption answers it). */
  #inputBytes = 0
  /** When its last connection went (epoch ms); undefined while attached. */
  detachedAt: number | undefined

  constructor(
    /** The provider's handle. */
    readonly handle: SubprocessTerminalHandle,
    windowBytes: number,
    /** Present for a durable terminal. */
    readonly durable: DurableTerminalSpec | undefined,
    /** Its place in the session host's table: freed once it was terminated. */
    readonly slot: TerminalSlot,
  ) {
    this.#windowBytes = windowBytes
    this.#ring = new OutputRing(durable ? Math.max(durable.retainBytes, windowBytes) : 0)
  }

  /** Input bytes written to it so far (feature `input-offsets`). */
  get inputOffset(): number {
    return this.#inputBytes
  }

  /** Write input, counted: a write request's or an input frame's bytes, in arrival order. */
  write(bytes: Buffer): void | Promise<void> {
    this.#inputBytes += bytes.length
    return this.handle.write(bytes)
  }

  /** The number of the connection that holds it; undefined while detached. */
  get id(): number | undefined {
    return this.#sink?.id
  }

  /** How its top-level process ended, once it did. */
  get exit(): TerminalExit | undefined {
    return this.#exit
  }

  /** Output bytes so far (the offset after the newest one). */
  get outputBytes(): number {
    return this.#ring.end
  }

  /**
   * Start forwarding to the connection that spawned it: called once the spawn's reply went out, so
   * the client knows the terminal's number before its first output frame (what the PTY printed so
   * far goes out now, from offset 0).
   */
  start(channel: FrameChannel, id: number): void {
    this.#sink = { channel, id }
    this.handle.onOutput((chunk) => this.#output(chunk))
    // `done` resolves after every chunk reached the listener above, so the exit follows the last frame.
    void this.handle.done.then((exit) => {
      this.#exit = exit
      this.#sink?.channel.send({ type: 'exit', terminal: this.#sink.id, exit, offset: this.#ring.end })
    })
  }

  /** The connection went: read on into the ring, with nobody to wait for. */
  detach(): void {
    this.#sink = undefined
    this.detachedAt = Date.now()
    this.#ring.acknowledgeAll()
    this.#resume()
  }

  /**
   * An adopter holds it now as number `id`: the bytes still held go out from {@link OutputRing.start}
   * (call after the adopt reply went out), then the exit when the program already ended. Returns
   * where the replay starts.
   */
  adopt(channel: FrameChannel, id: number): number {
    this.#sink = { channel, id }
    this.detachedAt = undefined
    const replayFrom = this.#ring.start
    let offset = replayFrom
    for (const chunk of this.#ring.rewind()) {
      channel.sendOutput(id, offset, chunk)
      offset += chunk.length
    }
    this.#pauseIfFull()
    if (this.#exit) channel.send({ type: 'exit', terminal: id, exit: this.#exit, offset: this.#ring.end })
    return replayFrom
  }

  /** Where an adoption will start its replay now. */
  get replayFrom(): number {
    return this.#ring.start
  }

  /** The client delivered everything before `offset`; false for an offset beyond what was sent. */
  acknowledge(offset: number): boolean {
    if (!this.#ring.acknowledge(offset)) return false
    if (this.#ring.unacknowledged < this.#windowBytes) this.#resume()
    return true
  }

  #output(chunk: Buffer): void {
    const offset = this.#ring.end
    this.#ring.append(chunk)
    if (!this.#sink) return this.#ring.acknowledgeAll()
    this.#sink.channel.sendOutput(this.#sink.id, offset, chunk)
    this.#pauseIfFull()
  }

  #pauseIfFull(): void {
    if (!this.#paused && this.#ring.unacknowledged >= this.#windowBytes && isPausable(this.handle)) {
      this.#paused = true
      this.handle.pauseOutput()
    }
  }

  #resume(): void {
    if (!this.#paused) return
    this.#paused = false
    if (isPausable(this.handle)) this.handle.resumeOutput()
  }
}
