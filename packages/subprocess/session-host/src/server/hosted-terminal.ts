import type { SubprocessTerminalHandle } from 'dsh-subprocess'
import type { FrameChannel } from '../protocol/channel'
import { OutputRing } from './output-ring'

/** A provider's handle that can stop reading its PTY (dsh-subprocess-local's `LocalTerminal`). */
interface PausableHandle extends SubprocessTerminalHandle {
  pauseOutput(): void
  resumeOutput(): void
}

function isPausable(handle: SubprocessTerminalHandle): handle is PausableHandle {
  const candidate = handle as Partial<PausableHandle>
  return typeof candidate.pauseOutput === 'function' && typeof candidate.resumeOutput === 'function'
}

/**
 * One terminal a connection spawned: forwards its output with absolute offsets, keeps what was not
 * acknowledged in an {@link OutputRing}, pauses the PTY when that reaches the window and resumes it
 * on acks, and reports the exit after the last output frame.
 */
export class HostedTerminal {
  readonly #ring = new OutputRing()
  readonly #channel: FrameChannel
  readonly #windowBytes: number
  #paused = false

  constructor(
    /** The connection's number for it. */
    readonly id: number,
    /** The provider's handle. */
    readonly handle: SubprocessTerminalHandle,
    channel: FrameChannel,
    windowBytes: number,
  ) {
    this.#channel = channel
    this.#windowBytes = windowBytes
  }

  /**
   * Start forwarding: called once the spawn's reply went out, so the client knows the terminal's
   * number before its first output frame (what the PTY printed so far goes out now, from offset 0).
   */
  start(): void {
    this.handle.onOutput((chunk) => this.#output(chunk))
    // `done` resolves after every chunk reached the listener above, so the exit follows the last frame.
    void this.handle.done.then((exit) => {
      this.#channel.send({ type: 'exit', terminal: this.id, exit, offset: this.#ring.end })
    })
  }

  /** The client delivered everything before `offset`; false for an offset beyond what was sent. */
  acknowledge(offset: number): boolean {
    if (!this.#ring.acknowledge(offset)) return false
    if (this.#paused && this.#ring.size < this.#windowBytes) {
      this.#paused = false
      if (isPausable(this.handle)) this.handle.resumeOutput()
    }
    return true
  }

  #output(chunk: Buffer): void {
    const offset = this.#ring.end
    this.#ring.append(chunk)
    this.#channel.sendOutput(this.id, offset, chunk)
    if (!this.#paused && this.#ring.size >= this.#windowBytes && isPausable(this.handle)) {
      this.#paused = true
      this.handle.pauseOutput()
    }
  }
}
