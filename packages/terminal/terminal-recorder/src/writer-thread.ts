import { Worker } from 'node:worker_threads'
import { errorMessage } from 'dsh-basics'
import type { EventCode } from './asciicast'
import { WriterPace } from './writer-pace'
import { WRITER_THREAD_SOURCE } from './writer-thread-source'

/** Bytes of one recording that may wait on the main thread for the writer thread; past it the recording stops. */
export const MAX_PENDING_BYTES = 8 * 1024 * 1024

/** How long events may gather before they are posted: one message per batch, not per PTY chunk. */
export const BATCH_MS = 50

/** Queued bytes that post a batch at once, whatever {@link BATCH_MS} says. */
export const BATCH_BYTES = 1024 * 1024

/**
 * The smallest output buffer a batch starts with. Each batch's buffer is twice what the last one held,
 * between this and {@link BATCH_BYTES}: a prompt's few bytes do not take a MiB, a flood fills whole ones.
 */
export const MIN_BATCH_CAPACITY = 64 * 1024

/**
 * Output chunks arriving within this many seconds of the output event they follow join it (as a
 * terminal that reads in bigger gulps would have seen them): a flood is a few hundred events, not
 * tens of thousands, and replay timing moves by at most this much.
 */
export const JOIN_OUTPUT_SECONDS = 0.01

/** What a recording hears from its writer. */
export interface ChannelEvents {
  /** The writer ended the recording early (its budget was spent): send it nothing more. */
  onStopped(): void
  /** The file could not be created or written (the recording then stops). */
  onError(message: string): void
}

/** How one recording's file starts. */
export interface ChannelOpen {
  readonly path: string
  /** The header line, newline included. */
  readonly header: string
  /** `maxBytesPerSession`. */
  readonly maxBytes: number
  /** Bytes of the budget kept for the stop marker. */
  readonly reserve: number
}

/** Messages the writer thread sends back. */
type Reply =
  | { kind: 'thread'; tid: number | undefined }
  | { kind: 'written'; id: number; bytes: number }
  | { kind: 'stopped'; id: number }
  | { kind: 'error'; id: number; message: string }
  | { kind: 'closed'; id: number }

/**
 * The recorder's writer thread and the channels of its recordings. One thread serves every recording;
 * it starts with the first. It keeps the process alive only while a recording is open (so a closing
 * host waits for the last lines to be written), never while the recorder is idle.
 */
export class WriterThread {
  #worker: Worker | undefined
  readonly #channels = new Map<number, RecordingChannel>()
  #next = 0
  /** The thread's priority: low while it keeps up, normal while a recording falls behind. */
  readonly pace = new WriterPace()

  /** Open a recording's file (created exclusively, 0600) and return the channel that feeds it. */
  open(options: ChannelOpen, events: ChannelEvents): RecordingChannel {
    const worker = this.#start()
    const id = ++this.#next
    const channel = new RecordingChannel(id, worker, events, this.pace, () => {
      this.#channels.delete(id)
      if (this.#channels.size === 0) this.#worker?.unref()
    })
    this.#channels.set(id, channel)
    worker.ref()
    worker.postMessage({ kind: 'open', id, ...options })
    return channel
  }

  /** Stop the thread (after the recordings were closed). */
  async dispose(): Promise<void> {
    const worker = this.#worker
    this.#worker = undefined
    for (const channel of this.#channels.values()) channel.lost('the recorder was unloaded')
    this.#channels.clear()
    await worker?.terminate()
  }

  #start(): Worker {
    if (this.#worker) return this.#worker
    const worker = new Worker(WRITER_THREAD_SOURCE, { eval: true })
    worker.unref()
    worker.on('message', (reply: Reply) => {
      if (reply.kind === 'thread') return this.pace.started(reply.tid)
      this.#channels.get(reply.id)?.reply(reply)
      if (reply.kind === 'written' && this.pace.hurrying)
        this.pace.caughtUp(Math.max(0, ...[...this.#channels.values()].map((channel) => channel.pendingBytes)))
    })
    worker.on('error', (error) => {
      if (this.#worker === worker) this.#worker = undefined
      for (const channel of this.#channels.values()) channel.lost(`the writer thread failed: ${errorMessage(error)}`)
      this.#channels.clear()
    })
    this.#worker = worker
    return worker
  }
}

/**
 * One recording's side of the writer thread: events are batched ({@link BATCH_MS}, {@link BATCH_BYTES})
 * and posted in order. Output bytes are copied as they arrive into the batch's own buffer, which is
 * transferred with it: the session's PTY chunks are never held past their turn (held, they would live
 * through collections and cost the session's thread more than the copy). Memory is bounded: what was
 * queued and not yet written counts in {@link RecordingChannel.pendingBytes}.
 */
export class RecordingChannel {
  #items: unknown[] = []
  /** The output event the next chunk may join: `[seconds, 'o', start, end]`, the last item queued. */
  #joinable: [number, 'o', number, number] | undefined
  /** This batch's output bytes, copied on arrival; allocated with the batch's first output. */
  #batch: Buffer | undefined
  #chunkBytes = 0
  /** The size of the next batch's output buffer: twice what the last batch held, within its bounds. */
  #capacity = MIN_BATCH_CAPACITY
  #queued = 0
  #pending = 0
  #timer: NodeJS.Timeout | undefined
  #stopped = false
  #closed: Promise<void> | undefined
  #resolveClosed: (() => void) | undefined

  constructor(
    private readonly id: number,
    private readonly worker: Worker,
    private readonly events: ChannelEvents,
    private readonly pace: WriterPace,
    private readonly forget: () => void,
  ) {}

  /** True once nothing more is recorded (the budget was spent, the file failed, or it was closed). */
  get stopped(): boolean {
    return this.#stopped
  }

  /** Bytes handed over and not yet written. */
  get pendingBytes(): number {
    return this.#pending
  }

  /** Output bytes at `seconds`, copied into the batch at once. */
  output(seconds: number, bytes: Uint8Array): void {
    if (this.#stopped || bytes.length === 0) return
    // A batch holds at most its buffer of output: a chunk that does not fit posts the batch first.
    if (this.#batch && this.#chunkBytes + bytes.length > this.#batch.length) this.#flush()
    // Not from Buffer's shared pool: this buffer is transferred (detached here).
    this.#batch ??= Buffer.allocUnsafeSlow(Math.max(this.#capacity, bytes.length))
    this.#batch.set(bytes, this.#chunkBytes)
    const joinable = this.#joinable
    if (joinable && seconds - joinable[0] <= JOIN_OUTPUT_SECONDS) joinable[3] += bytes.length
    else {
      const item: [number, 'o', number, number] = [seconds, 'o', this.#chunkBytes, this.#chunkBytes + bytes.length]
      this.#items.push(item)
      this.#joinable = item
    }
    this.#chunkBytes += bytes.length
    this.#count(bytes.length)
  }

  /** A text event (`i`, `r`, `m`) at `seconds`. */
  event(seconds: number, code: EventCode, data: string): void {
    if (this.#stopped) return
    this.#joinable = undefined
    this.#items.push([seconds, code, data])
    this.#count(data.length)
  }

  /** Give up early with a stop marker saying `reason` (nothing is recorded after it). */
  stop(seconds: number, reason: string): void {
    if (this.#stopped) return
    this.#flush()
    this.#stopped = true
    this.worker.postMessage({ kind: 'stop', id: this.id, seconds, reason })
  }

  /** Post what is queued and close the file, first recording `reason` as a stop marker when given. */
  close(seconds: number, reason?: string): Promise<void> {
    if (this.#closed) return this.#closed
    if (!this.#stopped) this.#flush()
    this.#stopped = true
    this.#closed = new Promise((resolve) => {
      this.#resolveClosed = resolve
    })
    this.worker.postMessage({ kind: 'close', id: this.id, seconds, reason })
    return this.#closed
  }

  /** A reply of the writer thread about this recording. */
  reply(reply: Exclude<Reply, { kind: 'thread' }>): void {
    if (reply.kind === 'written') this.#pending -= reply.bytes
    else if (reply.kind === 'stopped') {
      this.#stopped = true
      this.events.onStopped()
    } else if (reply.kind === 'error') {
      this.#stopped = true
      this.events.onError(reply.message)
    } else this.#finish()
  }

  /** The thread is gone: nothing more is written; a close waiting for it resolves. */
  lost(message: string): void {
    if (!this.#stopped) this.events.onError(message)
    this.#stopped = true
    this.#finish()
  }

  #finish(): void {
    this.forget()
    this.#resolveClosed?.()
    this.#resolveClosed = undefined
  }

  #count(bytes: number): void {
    this.#queued += bytes
    this.#pending += bytes
    this.pace.behind(this.#pending)
    if (this.#queued >= BATCH_BYTES) return this.#flush()
    if (this.#timer !== undefined) return
    this.#timer = setTimeout(() => this.#flush(), BATCH_MS)
    this.#timer.unref()
  }

  /** Post this turn's events as one message; output bytes travel in one transferred buffer. */
  #flush(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    this.#timer = undefined
    if (this.#items.length === 0) return
    // The worker reads the first #chunkBytes of the batch; the rest of it is never looked at.
    const bytes = this.#chunkBytes > 0 ? (this.#batch?.buffer as ArrayBuffer | undefined) : undefined
    const message = { kind: 'events', id: this.id, items: this.#items, bytes, queued: this.#queued }
    this.#items = []
    this.#joinable = undefined
    if (bytes) {
      this.#batch = undefined
      this.#capacity = Math.min(BATCH_BYTES, Math.max(MIN_BATCH_CAPACITY, 2 * this.#chunkBytes))
    }
    this.#chunkBytes = 0
    this.#queued = 0
    this.worker.postMessage(message, bytes ? [bytes] : [])
  }
}
