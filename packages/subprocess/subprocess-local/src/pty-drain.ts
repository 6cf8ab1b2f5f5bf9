import { readSync } from 'node:fs'
import type { IPty } from 'node-pty'

/** node-pty's Unix terminal as this module needs it: the master's descriptor and the stream that reads it. */
interface UnixPty {
  readonly fd?: unknown
  readonly _socket?: DrainableStream
}

/** The slice of node-pty's read stream (a `tty.ReadStream`) the drain touches. */
interface DrainableStream {
  destroyed?: boolean
  destroy(...args: unknown[]): unknown
  read?(): unknown
}

/** Most bytes one drain takes from the kernel: a holder of the PTY that keeps writing cannot keep it reading. */
const MAX_DRAIN_BYTES = 16 * 1024 * 1024

/** One read buffer for every drain (each runs to its end synchronously); what is read is copied out. */
const drainBuffer = Buffer.allocUnsafe(64 * 1024)

/**
 * Hand `deliver` whatever is still unread when node-pty destroys its read stream. node-pty reports
 * an exit once that stream closed, or 200 ms after the child exited when it did not. That happens
 * when the stream was paused for back-pressure, or the event loop was too busy to read in time. It
 * then destroys the stream, and the bytes still in the stream's buffer or in the kernel were lost.
 * Here the destroy first takes them, in order, before the exit is reported. Returns false where
 * node-pty is shaped otherwise (another version or platform): nothing is then drained.
 */
export function drainBeforeDestroy(pty: IPty, deliver: (bytes: Buffer) => void): boolean {
  const { fd, _socket: stream } = pty as IPty & UnixPty
  if (typeof fd !== 'number' || typeof stream?.destroy !== 'function') return false
  const destroy = stream.destroy
  let drained = false
  stream.destroy = function (this: unknown, ...args: unknown[]) {
    // Only while the stream still owns the descriptor: once destroyed, its number may be another file's.
    if (!drained && stream.destroyed !== true) {
      drained = true
      drainStream(stream)
      drainDescriptor(fd, deliver)
    }
    return destroy.apply(this, args)
  }
  return true
}

/**
 * What the paused stream read ahead and holds in its buffer: each `read()` emits its chunk as a
 * `data` event, which node-pty's own listener hands on, so nothing is delivered here twice.
 */
function drainStream(stream: DrainableStream): void {
  if (typeof stream.read !== 'function') return
  while (stream.read() !== null) {
    // Each chunk went out as a `data` event.
  }
}

/** What the kernel still holds: read the non-blocking master until it is empty (EAGAIN) or hung up (EIO). */
function drainDescriptor(fd: number, deliver: (bytes: Buffer) => void): void {
  for (let total = 0; total < MAX_DRAIN_BYTES; ) {
    let count: number
    try {
      count = readSync(fd, drainBuffer, 0, drainBuffer.length, null)
    } catch {
      // EAGAIN: nothing more now; EIO: the last holder of the terminal is gone and so is its output.
      return
    }
    if (count === 0) return
    total += count
    deliver(Buffer.from(drainBuffer.subarray(0, count)))
  }
}
