import { raceAbort } from 'dsh-basics'
import { type ForegroundFacts, type InspectOptions, isStdinWaitProvenOrUnprovable, type SubprocessTerminalHandle } from 'dsh-subprocess'
import {
  type TerminalBackendSession,
  type TerminalBackendTap,
  TerminalError,
  type TerminalInputState,
  type TerminalReadRequest,
  type TerminalReadResult,
  type TerminalScreen,
  type TerminalSendOperation,
  type TerminalSendRequest,
  type TerminalSessionStatus,
  type TerminalSignal,
  type TerminalSignalResult,
  type TerminalSize,
} from 'dsh-terminal'
import type { ShellBackendConfig } from '../config'
import { shellFailure } from '../errors'
import { lookAtInput, markedInput } from '../input/input-state'
import { sendInput } from '../input/send-input'
import type { SendSession, SendOptions, SendTiming } from '../readiness/send-contract'
import { joinEarlier, SendOperation } from '../readiness/send-operation'
import type { EarlierPart } from '../readiness/send-output'
import { SHELL_CONTINUATION_PROMPT, SHELL_PROMPT } from '../prompt-protocol'
import { SendOutputBuffer } from '../output/index'
import { ScreenModel } from '../screen/screen-model'
import { type ScreenSource, showingScreen } from '../screen/screen-send'
import { diedWithSessionHost } from './durable-lost'
import { HumanTaps } from './human-taps'
import { readScrollbackPage } from './scrollback-page'
import { lineNumberOf } from '../output/line-numbers'
import { TerminalStream } from './terminal-stream'
import { OutputLedger } from './output-ledger'

/**
 * One persistent shell: the provider's handle, the output pipeline and at most one active send.
 * Closing stops every readiness activity, settles an active send as `session_exit` and awaits the
 * provider's whole-tree teardown; a failed close can be retried.
 */
export class ShellSession implements TerminalBackendSession {
  /** Top-level process id. */
  readonly pid: number
  readonly #handle: SubprocessTerminalHandle
  readonly #config: ShellBackendConfig
  readonly #stream: TerminalStream
  readonly #screen: ScreenModel
  readonly #taps: HumanTaps
  readonly #timing: SendTiming
  readonly #sendSession: SendSession
  /** What a settling send reads to tell whether its result carries the screen (one object, not one per send). */
  readonly #screenSource: ScreenSource
  #active: SendOperation | undefined
  /** Output that arrived while no send was active, since the latest result was taken. */
  #earlier: SendOutputBuffer | undefined
  /** What a released send had taken as its earlier output: it goes before {@link ShellSession.#earlier}. */
  #earlierBefore: EarlierPart | undefined
  #atPrompt: { facts: ForegroundFacts; arrivals: number } | undefined
  /**
   * The look that pins the shell's process group after startup, while it runs (see
   * {@link ShellSession.#startPinning}): it resolves with its sample and the arrivals it saw, or
   * undefined. Writes, signals and inspections wait for it, so nothing is typed before it sampled.
   */
  #pinning: Promise<{ facts: ForegroundFacts; arrivals: number } | undefined> | undefined
  /** Own markers seen when the latest send settled: a send without input reports only a later one. */
  #markersSettled = 0
  /** A person typed since the latest send settled: statuses from then on are theirs, not the agent's. */
  #personTyped = false
  #motd = ''
  #exited = false
  /** Its session host died under it (see {@link ShellSession.lost}). */
  #lost = false
  #closeStarted = false
  #closing: Promise<void> | undefined
  #unsubscribe: (() => void) | undefined
  /** A session observer's tap on the raw output (the registry's `spec.onOutput`), from the first byte. */
  readonly #observe: ((bytes: Uint8Array) => void) | undefined
  /** The `TERM` the shell was started with. */
  readonly term: string | undefined
  /** The subprocess target it runs on, when it was opened on a named one. */
  readonly target: string | undefined
  /** Output offsets and the facts a durable terminal keeps for an adopter. */
  readonly #ledger: OutputLedger

  /**
   * Wraps a freshly spawned handle of `size` (default: the configured one); call
   * {@link ShellSession.startup} before handing it out. `launched.observe` receives every raw chunk,
   * in order; `launched.term` is the `TERM` the shell got.
   */
  constructor(
    handle: SubprocessTerminalHandle,
    config: ShellBackendConfig,
    nonces: { nonce: number; replNonce?: number | undefined },
    size: TerminalSize = { rows: config.rows, cols: config.cols },
    launched: {
      observe?: ((bytes: Uint8Array) => void) | undefined
      term?: string | undefined
      /** Absolute offset of the first byte the handle delivers (an adopted terminal's `replayFrom`). */
      outputFrom?: number | undefined
      name?: string | undefined
      target?: string | undefined
    } = {},
  ) {
    this.#observe = launched.observe
    this.term = launched.term
    this.target = launched.target
    this.#ledger = new OutputLedger(handle, { ...nonces, term: launched.term, name: launched.name }, launched.outputFrom)
    this.pid = handle.pid
    this.#handle = handle
    this.#config = config
    this.#screen = new ScreenModel({ size, reply: (data) => this.#reply(data) })
    this.#taps = new HumanTaps(this.#screen)
    this.#stream = new TerminalStream({
      screen: this.#screen,
      size,
      scrollbackLines: config.scrollbackLines,
      scrollbackMaxBytes: config.scrollbackMaxBytes,
      prompt: SHELL_PROMPT,
      continuationPrompt: SHELL_CONTINUATION_PROMPT,
      nonce: nonces.nonce,
      replNonce: nonces.replNonce,
    })
    this.#timing = {
      timeoutMs: config.timeoutMs,
      idleSilenceMs: config.idleSilenceMs,
      handoffGraceMs: config.handoffGraceMs,
      pollIntervalMs: config.pollIntervalMs,
      cancelGraceMs: config.cancelGraceMs,
    }
    this.#sendSession = {
      inspectForeground: (options) => this.#inspect(options),
      write: (data) => this.#afterPin(() => handle.write(data)),
      signalForeground: (signal) => this.#afterPin(() => handle.signalForeground(signal)),
      stream: this.#stream,
      status: () => this.status(),
      exited: () => this.#exited || handle.exit !== undefined,
      closing: () => this.#closeStarted,
      settled: (operation) => {
        if (this.#active !== operation) return
        this.#active = undefined
        // A released send was shown to nobody: its output stays the session's, and its command's status is still news.
        if (operation.handedOver) return
        this.#ledger.delivered(this.#screen.size, operation.settledInput)
        this.#earlier = operation.afterMatch ?? new SendOutputBuffer(this.#stream.line, this.#config.maxReadBytes)
        this.#markersSettled = this.#stream.markers
        this.#personTyped = false
        const facts = operation.promptFacts
        this.#atPrompt = facts ? { facts, arrivals: this.#stream.arrivals } : undefined
      },
    }
    this.#screenSource = {
      alternateScreen: () => this.#stream.alternateScreen,
      verticalMoves: () => this.#stream.verticalMoves,
      snapshot: () => this.#screen.snapshot(),
    }
    this.#stream.attach((chunk, gap) => (this.#active ? this.#active.onChunk(chunk, gap) : this.#earlier?.append(chunk)))
    void handle.done.then(() => this.#onExit())
  }

  /** The window size programs draw for (a send's `size` changes it). */
  get size(): TerminalSize {
    return this.#screen.size
  }

  /** Output of startup (the viewport of the startup send), shown to whoever opened the session. */
  get motd(): string {
    return this.#motd
  }

  /**
   * Startup is an empty send: it settles on the controlled prompt (or, for a shell without the
   * marker, a proven stdin wait or silence after some output). On the controlled prompt the shell's
   * process group is then pinned (`SubprocessTerminalHandle.pinShellGroup`). Rejects with
   * `STARTUP_TIMEOUT`, `STARTUP_EXITED`, or exactly `signal.reason`; the caller closes the session
   * on rejection.
   */
  async startup(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted()
    const operation = this.#begin(undefined, true)
    // Subscribing replays what arrived before, synchronously, into the startup send.
    this.#unsubscribe = this.#handle.onOutput((chunk) => this.#take(chunk))
    const result = await raceAbort(operation.done, signal)
    switch (result.waitReason) {
      case 'stdin_read':
      case 'inferred_idle':
        this.#motd = result.viewport
        this.#startPinning(operation)
        this.#ledger.delivered(this.#screen.size)
        return
      case 'timeout':
        throw shellFailure.startupTimeout()
      case 'session_exit':
        // What the shell printed, from the scrollback: an exit seen before startup subscribed
        // settles the send before the replayed output reaches it.
        throw shellFailure.startupExited(this.status(), this.#stream.scrollback.read({ offset: 0, count: 3, maxBytes: 1024 }).text)
    }
  }

  /**
   * Tell the provider which process group is the shell's. Right after startup settled on the
   * controlled prompt nothing was typed yet, so the group in front is the shell's own. That is the
   * top-level process's group when bash is the top-level process, but not under a sandbox launcher
   * (`bwrap → bwrap → bash`), where bash leads a group of its own; without the pin the prompt tier
   * would never see "the shell in front" and SIGKILL to the idle shell would not be refused.
   * A startup that ended on the prompt with the shell already recognised pins from that sample at
   * once. Otherwise the foreground is inspected after the open returned, off the opener's path:
   * until that look is done, writes, signals and inspections wait for it (so nothing is typed
   * before it sampled), and the first inspection asked meanwhile gets its sample when nothing
   * arrived since. Without the controlled prompt (a configured shell that prints no marker)
   * nothing is pinned and the provider's default stays.
   */
  #startPinning(operation: SendOperation): void {
    if (!this.#stream.promptReady) return
    const known = operation.promptFacts
    if (known) return this.#pin(known.processGroupId)
    const arrivals = this.#stream.arrivals
    const pinning = this.#handle.inspectForeground().then(
      (facts) => {
        if (!facts || this.#closeStarted) return undefined
        this.#pin(facts.processGroupId)
        this.#ledger.delivered(this.#screen.size)
        // That sample, seen through the pin, is the shell idle at its prompt: the first send may use it
        // as its pre-write facts, exactly as after a send that ended on the prompt.
        const idle = isStdinWaitProvenOrUnprovable(facts) && arrivals === this.#stream.arrivals && this.#stream.promptReady
        if (!idle) return undefined
        const pinned = { facts: { ...facts, isShellGroup: true }, arrivals }
        if (!this.#active) this.#atPrompt = pinned
        return pinned
      },
      // The provider could not look: its default group stays, as for a shell without the marker.
      () => undefined,
    )
    this.#pinning = pinning
    void pinning.then(() => {
      if (this.#pinning === pinning) this.#pinning = undefined
    })
  }

  #pin(processGroupId: number): void {
    this.#ledger.pinned(processGroupId)
    this.#handle.pinShellGroup(processGroupId)
  }

  /**
   * Take over an adopted terminal (instead of {@link ShellSession.startup}): its replay rebuilds the
   * scrollback and the screen, and what follows `facts.delivered` (the end of the last result its
   * previous client delivered) is the next send's earlier output; the shell group is pinned again.
   */
  adopt(facts: { delivered: number; shellGroup?: number | undefined }): void {
    // The ring no longer reaching back to the delivered end: everything replayed is news.
    if (!this.#ledger.replayUntil(facts.delivered)) this.#startEarlier()
    if (facts.shellGroup !== undefined) this.#pin(facts.shellGroup)
    this.#unsubscribe = this.#handle.onOutput((chunk) => this.#take(chunk))
  }

  /** One raw chunk: counted, and split where an adoption's replay reaches output nobody was shown. */
  #take(chunk: Uint8Array): void {
    this.#ledger.take(
      chunk,
      (bytes) => this.#feed(bytes),
      () => this.#startEarlier(),
    )
  }

  #startEarlier(): void {
    this.#earlier = new SendOutputBuffer(this.#stream.line, this.#config.maxReadBytes)
  }

  #feed(chunk: Uint8Array): void {
    this.#stream.write(chunk)
    this.#taps.deliver(chunk)
    this.#observe?.(chunk)
  }

  /** Run `action` once the startup pin is in place (at once when it is). */
  #afterPin<T>(action: () => Promise<T>): Promise<T> {
    const pinning = this.#pinning
    return pinning ? pinning.then(action) : action()
  }

  /**
   * One foreground inspection, after the startup pin. Asked while the pin's look runs, a plain
   * inspection gets that look's sample if nothing arrived since it was taken: nothing was written
   * meanwhile either (writes wait for the pin), so a second look would see the same.
   */
  #inspect(options?: InspectOptions): Promise<ForegroundFacts | undefined> {
    const pinning = this.#pinning
    if (!pinning) return this.#handle.inspectForeground(options)
    return pinning.then((pinned) =>
      pinned && !options?.terminalModes && pinned.arrivals === this.#stream.arrivals ? pinned.facts : this.#handle.inspectForeground(options),
    )
  }

  /**
   * Start one send: resize first when `size` is given, then `text` (or `keys`, encoded for the
   * program's current modes) and Enter when `submit`; an empty send without a size writes nothing
   * and only waits. The result carries the screen when a full-screen program holds the terminal.
   */
  startSend(request: TerminalSendRequest): TerminalSendOperation {
    if (this.#closeStarted) throw shellFailure.closed()
    if (this.#active) throw new TerminalError('SEND_ACTIVE', 'PTY session already has an active send')
    const { size } = request
    const movesBefore = this.#stream.verticalMoves
    // On the alternate screen a paste goes to an editor, not a line reader (see `sendInput`).
    const typed = sendInput(request, () => this.#screen.modes, this.#stream.alternateScreen)
    // A send that only resizes writes no byte, yet the resize is its write: the program's reaction
    // (SIGWINCH, a redraw, a new wait) is what it waits for, never the wait that held before.
    const input = typed ?? (size === undefined ? undefined : '')
    const atPrompt = this.#takeAtPrompt()
    const earlier = this.#takeEarlier()
    const timing = {
      ...this.#timing,
      ...(request.timeoutMs === undefined ? {} : { timeoutMs: request.timeoutMs }),
      ...(request.idleMs === undefined ? {} : { idleSilenceMs: request.idleMs }),
    }
    const operation = this.#begin(input, false, request.signal, typed === undefined ? undefined : atPrompt, {
      timing,
      settleOnSilence: request.settleOnSilence,
      waitFor: request.waitFor,
      idleMs: request.idleMs,
      earlier,
      session: size === undefined ? this.#sendSession : this.#resizingSession(size),
    })
    return showingScreen(operation, this.#screenSource, movesBefore)
  }

  /**
   * The session as one send sees it, when that send's write resizes the PTY and the screen model first, right
   * after the pre-write inspection, so the foreground group's SIGWINCH comes after that baseline.
   * A resize-only send (empty input) writes no byte.
   */
  #resizingSession(size: TerminalSize): SendSession {
    return {
      ...this.#sendSession,
      write: (data) =>
        this.#afterPin(() => {
          this.#handle.resize(size.rows, size.cols)
          this.#stream.resize(size)
          return data === '' ? Promise.resolve() : this.#handle.write(data)
        }),
    }
  }

  /** What the terminal shows now: every byte that arrived before the call, rendered by the session's emulator. */
  screen(): Promise<TerminalScreen> {
    if (this.#closeStarted) return Promise.reject(shellFailure.closed())
    return this.#screen.snapshot()
  }

  /**
   * The emulator answered a terminal query: the program that asked reads the answer from the PTY.
   * Not when the stream already ends on this session's prompt: the asker is gone (a command that
   * printed a query and exited, a `cat` of binary data) and the line editor would type the answer
   * into the next command.
   */
  #reply(data: string): void {
    if (this.#closeStarted || this.#sendSession.exited() || this.#stream.promptKind !== undefined) return
    // After exit the provider refuses writes: nobody is left to read the answer.
    this.#handle.write(data).catch(() => undefined)
  }

  /**
   * What the session printed since the latest result was taken (a send settled, or a read showed the
   * newest lines), consumed now: the next send's result carries it as earlier output.
   */
  #takeEarlier(): SendOptions['earlier'] {
    const earlier = this.#earlier
    const before = this.#earlierBefore
    this.#earlier = undefined
    this.#earlierBefore = undefined
    if (!earlier) return before
    const { viewport, truncated, firstLine } = earlier.settle()
    if (viewport === '' && !truncated) return before
    const part = firstLine === undefined ? { output: viewport, truncated } : { output: viewport, truncated, firstLine: lineNumberOf(firstLine) }
    return joinEarlier(before, part)
  }

  /**
   * Stop the active send's wait without signalling (its caller is gone: the session was detached).
   * What it took and collected, and everything printed from now on, is the next result's earlier
   * output; the status of the command it ran is reported by the next send. No-op without a send.
   */
  release(): void {
    const operation = this.#active
    if (!operation) return
    const { earlier, buffer } = operation.release()
    this.#atPrompt = undefined
    this.#earlierBefore = joinEarlier(this.#earlierBefore, earlier)
    this.#earlier = buffer ?? new SendOutputBuffer(this.#stream.line, this.#config.maxReadBytes)
  }

  /**
   * The shell is still idle at the prompt the previous send ended on when nothing arrived since
   * (and nothing was written or signalled: every write is a send, and `signal` forgets it). Then the
   * send needs no pre-write inspection. Taken once: the next send re-establishes it.
   */
  #takeAtPrompt(): ForegroundFacts | undefined {
    const atPrompt = this.#atPrompt
    this.#atPrompt = undefined
    return atPrompt && atPrompt.arrivals === this.#stream.arrivals && this.#stream.promptReady ? atPrompt.facts : undefined
  }

  /** One bounded page of retained scrollback (see {@link readScrollbackPage}); a page ending at the newest line takes the earlier output. */
  read(request: TerminalReadRequest): TerminalReadResult {
    const maxBytes = this.#config.maxReadBytes
    const { result, showsNewest } = readScrollbackPage(this.#stream.scrollback, request, maxBytes)
    if (showsNewest && (this.#earlier || this.#earlierBefore)) {
      this.#earlier = new SendOutputBuffer(this.#stream.line, maxBytes)
      this.#earlierBefore = undefined
      this.#ledger.delivered(this.#screen.size)
    }
    return result
  }

  /** Let a person watch: the rendered screen, then every raw chunk (see {@link HumanTaps}). */
  tap(onOutput: (bytes: Uint8Array) => void, onEnd: (reason: string) => void): TerminalBackendTap {
    if (this.#closeStarted) throw shellFailure.closed()
    return this.#taps.open(onOutput, onEnd)
  }

  /**
   * Write what a person typed, as it is. It is not a send: nothing waits, and what it prints reaches
   * the agent as earlier output. The shell may no longer be idle where the last send left it.
   */
  writeAsHuman(data: string): Promise<void> {
    if (this.#closeStarted) return Promise.reject(shellFailure.closed())
    this.#atPrompt = undefined
    this.#personTyped = true
    return this.#afterPin(() => this.#handle.write(data))
  }

  /** Deliver `signal` to the foreground group resolved now; the provider's refusals surface unchanged. */
  async signal(signal: TerminalSignal): Promise<TerminalSignalResult> {
    if (this.#closeStarted) throw shellFailure.closed()
    this.#atPrompt = undefined
    const targetPgid = await this.#afterPin(() => this.#handle.signalForeground(signal))
    return { delivered: true, targetPgid }
  }

  /**
   * What the terminal waits for now. The shell known idle at its prompt (nothing arrived since a
   * send ended there) needs no inspection; otherwise one, plus a read of the terminal's flags when a
   * program is proven to read it. While a send's input was not taken up yet it is `busy` (see
   * `inputNotTakenUp`). `undefined` once the session exited or is closing.
   */
  async inputState(): Promise<TerminalInputState | undefined> {
    if (this.#closeStarted || this.#sendSession.exited()) return undefined
    const stream = this.#stream
    const atPrompt = this.#atPrompt
    const known = atPrompt && atPrompt.arrivals === stream.arrivals ? markedInput(stream, atPrompt.facts.program) : undefined
    if (known) return known
    const inputPending = this.#active?.inputPending === true
    const input = await lookAtInput((options) => this.#inspect(options), stream, { wanted: () => !this.#closeStarted, inputPending })
    return this.#closeStarted ? undefined : input
  }

  /** True once the shell died with the session host that held it, not by an exit of its own. */
  lost(): boolean {
    return this.#lost
  }

  /** Status of the top-level shell. */
  status(): TerminalSessionStatus {
    const exit = this.#handle.exit
    return exit ? { kind: 'exited', exitCode: exit.exitCode, signal: exit.signal } : { kind: 'running' }
  }

  /**
   * Let go of a durable terminal (one whose provider keeps it for an adopter: it has `setFacts`)
   * without ending it: stop reading, end the taps, keep the processes. False, doing nothing, for
   * any other terminal: the caller closes it.
   */
  leave(): boolean {
    if (!this.#handle.setFacts || this.#closeStarted) return false
    this.#closeStarted = true
    this.release()
    this.#taps.end('this host went away; the session stays detached for another host to resume')
    this.#unsubscribe?.()
    this.#unsubscribe = undefined
    this.#screen.dispose()
    return true
  }

  /**
   * Close: no further sends or signals, the active send settles as `session_exit`, then the whole
   * process tree is torn down. Idempotent while in flight and after success; after a failure (the
   * provider names the survivors) a later call retries.
   */
  close(_reason: string): Promise<void> {
    if (this.#closing) return this.#closing
    this.#closeStarted = true
    this.#active?.abandon()
    this.#taps.end('the session was closed')
    const attempt = this.#handle.terminate().then(
      () => {
        this.#unsubscribe?.()
        this.#unsubscribe = undefined
        this.#screen.dispose()
      },
      (error: unknown) => {
        if (this.#closing === attempt) this.#closing = undefined
        throw error
      },
    )
    this.#closing = attempt
    return attempt
  }

  #begin(
    input: string | undefined,
    startup: boolean,
    signal?: AbortSignal,
    promptFacts?: ForegroundFacts,
    rules: Pick<SendOptions, 'timing' | 'settleOnSilence' | 'waitFor' | 'idleMs' | 'earlier'> & { session?: SendSession } = { timing: this.#timing },
  ): SendOperation {
    const operation = new SendOperation(rules.session ?? this.#sendSession, {
      input,
      startup,
      signal,
      promptFacts,
      // A send without input reports a status that arrived since the latest result, unless a person
      // typed since: then only one that arrives during this send.
      markersBefore: input === undefined ? (this.#personTyped ? this.#stream.markers : this.#markersSettled) : undefined,
      timing: rules.timing,
      settleOnSilence: rules.settleOnSilence,
      waitFor: rules.waitFor,
      idleMs: rules.idleMs,
      earlier: rules.earlier,
      maxBytes: this.#config.maxReadBytes,
    })
    this.#active = operation
    operation.start()
    return operation
  }

  #onExit(): void {
    const exit = this.#handle.exit
    // A SIGKILL may be the session host's death: tell it first, so a send it ends is seen as lost.
    if (exit?.exitCode === null && exit.signal === 'SIGKILL') {
      void diedWithSessionHost(this.#handle).then((lost) => {
        this.#lost = lost
        this.#ended()
      })
      return
    }
    this.#ended()
  }

  #ended(): void {
    this.#exited = true
    this.#stream.end()
    this.#active?.onExit()
    const exit = this.#handle.exit
    this.#taps.end(exit?.signal ? `the shell was killed by ${exit.signal}` : `the shell exited with status ${exit?.exitCode ?? 'unknown'}`)
  }
}
