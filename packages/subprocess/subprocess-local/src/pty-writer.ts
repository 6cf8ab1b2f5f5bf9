import { writeSync } from 'node:fs'
import type { IPty } from 'node-pty'

/** node-pty's Unix terminal: its PTY master's file descriptor and the read stream that closes it. */
interface UnixPty {
  readonly fd?: unknown
  readonly _socket?: { prependListener?(event: 'error' | 'close', listener: () => void): unknown }
}

/** Longest pause between attempts while the kernel refuses input (a program that does not read). */
const MAX_RETRY_MS = 16

/**
 * Writes input to a PTY master synchronously, in order, and stops for good once the PTY's read side
 * fails or closes. node-pty writes from its thread pool and retries a refused write (`EAGAIN`) on
 * every event-loop turn: when the last process on the PTY exits meanwhile, a write in flight meets
 * the closed file descriptor (or one a later `open` reused) and node-pty prints "Unhandled pty write
 * error". Here no write is ever in flight: the read side's failure (`EIO`) is seen on this thread
 * before the descriptor is closed, and everything still queued is dropped, since nobody is left to
 * read it. Input the kernel refuses is retried with a growing pause (up to 16 ms), not on every turn.
 */
export class PtyWriter {
  readonly #fd: number
  readonly #queue: Buffer[] = []
  #offset = 0
  #retryMs = 0
  /** Cancels the scheduled retry, while one is scheduled. */
  #retry: (() => void) | undefined
  #closed = false

  private constructor(fd: number) {
    this.#fd = fd
  }

  /**
   * A writer for `pty`, or `undefined` where node-pty is shaped otherwise (another version or
   * platform): the caller then writes through node-pty itself.
   */
  static for(pty: IPty): PtyWriter | undefined {
    const { fd, _socket: socket } = pty as IPty & UnixPty
    if (typeof fd !== 'number' || typeof socket?.prependListener !== 'function') return undefined
    const writer = new PtyWriter(fd)
    // Prepended: this runs before node-pty's own handlers and before the stream closes the descriptor.
    socket.prependListener('error', () => writer.close())
    socket.prependListener('close', () => writer.close())
    return writer
  }

  /** Queue `bytes` and write what the kernel takes now; ignored once closed. */
  write(bytes: Buffer): void {
    if (this.#closed || bytes.length === 0) return
    this.#queue.push(bytes)
    if (this.#queue.length === 1 && this.#retry === undefined) this.#flush()
  }

  /** The PTY is going away: drop what is queued and never touch the descriptor again. */
  close(): void {
    this.#closed = true
    this.#queue.length = 0
    this.#cancelRetry()
  }

  #flush(): void {
    this.#retry = undefined
    while (!this.#closed && this.#queue.length > 0) {
      const head = this.#queue[0] as Buffer
      let written: number
      try {
        written = writeSync(this.#fd, head, this.#offset, head.length - this.#offset)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EAGAIN') return this.#retryLater()
        // EIO or EBADF: the PTY is gone with its reader.
        return this.close()
      }
      this.#retryMs = 0
      this.#offset += written
      if (this.#offset >= head.length) {
        this.#queue.shift()
        this.#offset = 0
      }
    }
  }

  #retryLater(): void {
    const delay = this.#retryMs
    this.#retryMs = delay === 0 ? 1 : Math.min(delay * 2, MAX_RETRY_MS)
    if (delay === 0) {
      const immediate = setImmediate(() => this.#flush())
      this.#retry = () => clearImmediate(immediate)
    } else {
      const timeout = setTimeout(() => this.#flush(), delay)
      this.#retry = () => clearTimeout(timeout)
    }
  }

  #cancelRetry(): void {
    this.#retry?.()
    this.#retry = undefined
  }
}
