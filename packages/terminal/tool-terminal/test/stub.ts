import type {
  TerminalBackend,
  TerminalBackendSession,
  TerminalBackendSpawnSpec,
  TerminalBackendTap,
  TerminalInputState,
  TerminalReadRequest,
  TerminalReadResult,
  TerminalScreen,
  TerminalSendOperation,
  TerminalSendRead,
  TerminalSendRequest,
  TerminalSendResult,
  TerminalSessionStatus,
  TerminalSignal,
  TerminalSignalResult,
  TerminalSize,
} from 'dsh-terminal'

/** What a scripted send does: settle at once with this result, or `hang` until cancelled or closed. */
export type StubReply = Partial<TerminalSendResult> | 'hang' | Error

/**
 * One send of the stub: records what was written, buffers output for `readOutput`, and settles as
 * scripted. Cancellation (cancel() or the request's signal) settles it like an interrupted command.
 * With `waitFor`, emitted output is tested line by line (the line in progress too) and the first
 * match settles the send as `output_match`, like the real backend.
 */
export class StubSend implements TerminalSendOperation {
  readonly done: Promise<TerminalSendResult>
  cancels = 0
  settled = false
  private pending = ''
  private emitted = false
  private lost = false
  /** The line in progress, for `waitFor` (output after the last newline emitted so far). */
  private partialLine = ''
  private resolve!: (result: TerminalSendResult) => void
  private reject!: (error: unknown) => void

  constructor(
    readonly request: TerminalSendRequest,
    readonly session: StubSession,
    reply: StubReply,
  ) {
    this.done = new Promise<TerminalSendResult>((resolve, reject) => {
      this.resolve = resolve
      this.reject = reject
    })
    // Observers of `done` in tests must not turn a scripted failure into an unhandled rejection.
    this.done.catch(() => {})
    request.signal?.addEventListener('abort', () => this.cancel(), { once: true })
    if (reply instanceof Error) this.fail(reply)
    else if (reply !== 'hang') this.finish(reply)
  }

  /** Produce output the send has not settled yet: `readOutput` returns it. */
  emit(text: string, truncated = false): void {
    if (this.settled) return
    this.emitted = true
    this.pending += text
    if (truncated) this.lost = true
    const pattern = this.request.waitFor
    if (!pattern) return
    const lines = (this.partialLine + text).split('\n')
    this.partialLine = lines.at(-1) ?? ''
    for (const line of lines) {
      const found = pattern.firstMatch(line)
      if (found !== undefined) return this.finish({ waitReason: 'output_match', match: { text: found, line }, exitCode: undefined })
    }
  }

  readOutput(): TerminalSendRead {
    const read = { delta: this.pending, truncated: this.lost }
    this.pending = ''
    this.lost = false
    return read
  }

  cancel(): boolean {
    if (this.settled || !this.session.honourCancel) return !this.settled
    this.cancels++
    this.session.signals.push('SIGINT')
    this.emit('^C\n')
    this.finish({ waitReason: 'stdin_read', exitCode: 130 })
    return true
  }

  /**
   * Settle with the default result overridden by `partial`. Like the real backend, the viewport is
   * the output no `readOutput` consumed; a send that never emitted shows `out:<text>`.
   */
  finish(partial: Partial<TerminalSendResult> = {}): void {
    if (this.settled) return
    this.settled = true
    const unread = this.emitted ? this.readOutput() : { delta: `out:${this.request.text}`, truncated: false }
    this.resolve({
      viewport: unread.delta,
      waitReason: 'stdin_read',
      sessionStatus: this.session.state,
      truncated: unread.truncated,
      exitCode: 0,
      ...(this.session.knownInput ? { input: this.session.knownInput } : {}),
      ...partial,
    })
  }

  fail(error: unknown): void {
    if (this.settled) return
    this.settled = true
    this.reject(error)
  }
}

/** A scripted backend session: every send, signal, read and close is recorded for assertions. */
export class StubSession implements TerminalBackendSession {
  readonly motd: string
  readonly pid: number
  readonly sends: StubSend[] = []
  readonly signals: TerminalSignal[] = []
  readonly reads: TerminalReadRequest[] = []
  readonly closes: string[] = []
  /** Replies for the next sends, in order; when empty, sends settle at once with `out:<text>`. */
  readonly replies: StubReply[] = []
  /** Retained lines, oldest first, served by `read`. */
  lines: string[] = []
  /** False makes cancel() a no-op, like a backend that never settles an interrupted send. */
  honourCancel = true
  state: TerminalSessionStatus = { kind: 'running' }
  /**
   * What the terminal waits for: put into every settled send's result and answered by `inputState`.
   * An Error makes `inputState` reject (results then carry none); 'hang' makes it never answer.
   */
  input: TerminalInputState | Error | 'hang' | undefined
  /** How often `inputState` was asked. */
  inputStateCalls = 0
  /** Window size: the spawn's, then the last send's that asked for one; none unless one was asked for. */
  size: TerminalSize | undefined
  /** What `screen()` answers; with `undefined` the session has no `screen` method (a backend without an emulator). */
  shownScreen: TerminalScreen | undefined
  /** How often `screen` was asked. */
  screenCalls = 0
  /** What people typed through `writeAsHuman`, in order. */
  readonly humanWrites: string[] = []
  /** False removes `tap` and `writeAsHuman`, like a backend a person cannot watch. */
  watchable = true

  /** `input` when it is a state (not a scripted failure or hang). */
  get knownInput(): TerminalInputState | undefined {
    const input = this.input
    return input === undefined || input === 'hang' || input instanceof Error ? undefined : input
  }

  constructor(
    readonly spec: TerminalBackendSpawnSpec,
    motd: string,
  ) {
    this.motd = motd
    this.pid = 4000 + Number(spec.sessionId.slice('pty-'.length))
    this.size = spec.size
  }

  /** Present only while `shownScreen` is set, like a backend that keeps a screen model. */
  get screen(): (() => Promise<TerminalScreen>) | undefined {
    const shown = this.shownScreen
    if (!shown) return undefined
    return async () => {
      this.screenCalls++
      return shown
    }
  }

  /** Present while `watchable`: a tap whose screen is empty and whose output nobody feeds. */
  get tap(): ((onOutput: (bytes: Uint8Array) => void, onEnd: (reason: string) => void) => TerminalBackendTap) | undefined {
    if (!this.watchable) return undefined
    return () => ({ screen: Promise.resolve(''), close: () => {} })
  }

  /** Present while `watchable`: records what a person typed. */
  get writeAsHuman(): ((data: string) => Promise<void>) | undefined {
    if (!this.watchable) return undefined
    return async (data) => {
      this.humanWrites.push(data)
    }
  }

  startSend(request: TerminalSendRequest): TerminalSendOperation {
    if (request.size) this.size = request.size
    const send = new StubSend(request, this, this.replies.shift() ?? {})
    this.sends.push(send)
    return send
  }

  read(request: TerminalReadRequest): TerminalReadResult {
    this.reads.push({ ...request })
    const total = this.lines.length
    const count = request.count ?? total
    const end = request.fromLine === undefined ? Math.max(0, total - (request.offset ?? 0)) : Math.min(total, request.fromLine - 1 + count)
    const begin = request.fromLine === undefined ? Math.max(0, end - count) : Math.min(end, request.fromLine - 1)
    return {
      text: this.lines.slice(begin, end).join('\n'),
      totalLines: total,
      oldestLine: 1,
      lineBegin: end === begin ? 0 : begin + 1,
      lineEnd: end === begin ? 0 : end,
      truncated: false,
    }
  }

  async signal(signal: TerminalSignal): Promise<TerminalSignalResult> {
    if (signal === 'SIGKILL') throw new Error('refusing to SIGKILL the terminal shell; terminate the terminal session instead')
    this.signals.push(signal)
    return { delivered: true, targetPgid: this.pid }
  }

  status(): TerminalSessionStatus {
    return this.state
  }

  inputState(): Promise<TerminalInputState | undefined> {
    this.inputStateCalls++
    const input = this.input
    if (input === 'hang') return new Promise(() => {})
    return input instanceof Error ? Promise.reject(input) : Promise.resolve(input)
  }

  async close(reason: string): Promise<void> {
    this.closes.push(reason)
    for (const send of this.sends) send.finish({ viewport: '', waitReason: 'session_exit', exitCode: undefined })
    this.state = { kind: 'exited', exitCode: null, signal: 'SIGHUP' }
  }
}

/** A `shell` backend whose sessions are {@link StubSession}s; a `cwd` of `/missing` fails the spawn. */
export class StubBackend implements TerminalBackend {
  readonly sessions: StubSession[] = []
  /** Startup output of the next sessions. */
  motd = 'stub shell ready'

  constructor(readonly type = 'shell') {}

  async spawn(spec: TerminalBackendSpawnSpec): Promise<TerminalBackendSession> {
    if (spec.cwd === '/missing') throw new Error('PTY cwd /missing is not an existing directory')
    const session = new StubSession(spec, this.motd)
    this.sessions.push(session)
    return session
  }

  /** The session created for `sessionId`. */
  session(sessionId: string): StubSession {
    const found = this.sessions.find((session) => session.spec.sessionId === sessionId)
    if (!found) throw new Error(`no stub session ${sessionId}`)
    return found
  }
}
