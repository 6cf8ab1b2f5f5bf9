import { open } from 'node:fs/promises'
import { join } from 'node:path'
import { type Context, Service } from '@deepseek-ai/cordis'
import { errorMessage } from 'dsh-basics'
import type { TerminalSessionStart } from 'dsh-terminal'
import type { RecorderConfig } from './config'
import { isRecordingName, listRecordingNames, preparePrivateDirectory, resolveRecordingDirectory } from './directory'
import { RecorderError } from './errors'
import { scrubbedValues } from './redaction'
import { RETENTION_INTERVAL_MS, removeExpiredRecordings } from './retention'
import { SessionRecording } from './session-recording'
import { WriterThread } from './writer-thread'

declare module '@deepseek-ai/cordis' {
  interface Context {
    /** The flight recorder (plugin `dsh-terminal-recorder`): where recordings are, and reading one. */
    recorder: RecorderService
  }
}

/** Why a recording stops when the recorder unloads before its session ends. */
export const RECORDER_UNLOADED = 'the recorder was unloaded'

/**
 * `ctx.recorder`: records every session started while it is mounted (one asciicast v2 file each,
 * see {@link SessionRecording}) into a private directory, and removes expired recordings at start and
 * every hour. Hosts read recordings through it (the web player), never by building paths themselves.
 */
export class RecorderService extends Service {
  static readonly inject = ['terminals']

  /** The absolute directory recordings go to. */
  readonly directory: string
  // Proxied service: TypeScript `private`, not `#private` (see docs/contributing.md).
  private readonly config: RecorderConfig
  private readonly recordings = new Set<SessionRecording>()
  private readonly writer = new WriterThread()

  constructor(ctx: Context, config: RecorderConfig) {
    super(ctx, 'recorder')
    this.config = config
    this.directory = resolveRecordingDirectory(config.dir)
  }

  async *[Service.init]() {
    await preparePrivateDirectory(this.directory)
    await this.removeExpired()
    const timer = setInterval(() => void this.removeExpired(), RETENTION_INTERVAL_MS)
    timer.unref()
    yield () => clearInterval(timer)
    const stopWatching = this.ctx.terminals.observeSessions({ sessionStarting: (start) => this.startRecording(start) })
    yield async () => {
      stopWatching()
      await Promise.all([...this.recordings].map((recording) => recording.close(RECORDER_UNLOADED)))
      this.recordings.clear()
      await this.writer.dispose()
    }
  }

  /** Resolves once the recordings of every session that ended so far are completely written. */
  async settled(): Promise<void> {
    await Promise.all([...this.recordings].map((recording) => recording.closed))
  }

  /** Recording names in the directory, newest first. */
  list(): Promise<string[]> {
    return listRecordingNames(this.directory)
  }

  /**
   * The text of the recording called `name` (a bare name from {@link RecorderService.list}: no path,
   * no link followed); `NO_RECORDING` when there is none.
   */
  async read(name: string): Promise<string> {
    if (!isRecordingName(name)) throw new RecorderError('NO_RECORDING', `${JSON.stringify(name)} is not a recording name (they end in .cast and hold no path)`)
    let handle
    try {
      handle = await open(join(this.directory, name), 'r')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new RecorderError('NO_RECORDING', `no recording ${name} in ${this.directory}`)
      throw error
    }
    try {
      return await handle.readFile('utf8')
    } finally {
      await handle.close()
    }
  }

  /** Remove what retention says is expired; failures are logged, never thrown (the next round retries). */
  private async removeExpired(): Promise<void> {
    try {
      const removed = await removeExpiredRecordings(this.directory, this.config.retentionDays)
      if (removed.length > 0) this.ctx.logger('recorder').info(`removed ${removed.length} recording(s) older than ${this.config.retentionDays} days`)
    } catch (error) {
      this.ctx.logger('recorder').warn(`retention could not clean ${this.directory}: ${errorMessage(error)}`)
    }
  }

  /** A new session: its recording, kept until its file is closed. */
  private startRecording(start: TerminalSessionStart): SessionRecording {
    const recording = new SessionRecording(start, {
      directory: this.directory,
      maxBytes: this.config.maxBytesPerSession,
      secrets: scrubbedValues(process.env),
      hostPid: process.pid,
      writer: this.writer,
      onError: (message) => this.ctx.logger('recorder').warn(message),
      onClosed: (closed) => this.recordings.delete(closed),
    })
    this.recordings.add(recording)
    return recording
  }
}
