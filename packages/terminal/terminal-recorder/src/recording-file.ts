import { constants } from 'node:fs'
import { type FileHandle, open } from 'node:fs/promises'

/** Bytes that may wait in memory for the disk, per recording; past it the recording stops (see {@link RecordingFile.append}). */
export const MAX_PENDING_BYTES = 8 * 1024 * 1024

/** Owner read and write only. */
const FILE_MODE = 0o600

/**
 * One recording's file, written in order, off the session's path: lines are queued synchronously and
 * written in batches, one write at a time. The file is created on the first write, exclusively
 * (never an existing file, never through a symbolic link), with mode 0600.
 */
export class RecordingFile {
  readonly #path: string
  readonly #onError: (error: unknown) => void
  #queue: string[] = []
  #queuedBytes = 0
  #draining: Promise<void> | undefined
  #handle: FileHandle | undefined
  #failed = false
  #closed: Promise<void> | undefined

  /** `onError` hears the first failure to create or write the file; later lines are dropped. */
  constructor(path: string, onError: (error: unknown) => void) {
    this.#path = path
    this.#onError = onError
  }

  /** Where the recording goes. */
  get path(): string {
    return this.#path
  }

  /** Bytes queued and not yet written. */
  get pendingBytes(): number {
    return this.#queuedBytes
  }

  /** Queue one line of `bytes` UTF-8 bytes; it is written after every line queued before it. */
  append(line: string, bytes: number): void {
    if (this.#failed || this.#closed) return
    this.#queue.push(line)
    this.#queuedBytes += bytes
    this.#draining ??= this.#drain()
  }

  /** Write what is queued, then close the file. Idempotent; never rejects (a failure went to `onError`). */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      await this.#draining
      await this.#handle?.close().catch(() => undefined)
      this.#handle = undefined
    })()
    return this.#closed
  }

  async #drain(): Promise<void> {
    try {
      this.#handle ??= await open(this.#path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, FILE_MODE)
      while (this.#queue.length > 0) {
        const batch = this.#queue.join('')
        this.#queue = []
        this.#queuedBytes = 0
        await this.#handle.write(batch)
      }
    } catch (error) {
      this.#failed = true
      this.#queue = []
      this.#queuedBytes = 0
      this.#onError(error)
    } finally {
      this.#draining = undefined
      // A line queued while the last write was being awaited, after the loop looked, starts another round.
      if (this.#queue.length > 0 && !this.#failed) this.#draining = this.#drain()
    }
  }
}
