import { raceAbort } from 'dsh-basics'
import type { ForegroundFacts, SubprocessTerminalHandle } from 'dsh-subprocess'
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
import { SendOperation } from '../readiness/send-operation'
import { SHELL_CONTINUATION_PROMPT, SHELL_PROMPT } from '../prompt-protocol'
import { ScreenModel } from '../screen/screen-model'
import type { ScreenSource } from '../screen/screen-send'
import { diedWithSessionHost } from './durable-lost'
import { HumanTaps } from './human-taps'
import { readScrollbackPage } from './scrollback-page'
import { TerminalStream } from './terminal-stream'
import { OutputLedger } from './output-ledger'
import { BetweenSends } from './between-sends'
import { type PinLookHooks, ShellGroupPin } from './shell-group-pin'
import { type LaunchedShell, resizingSession, timingFor, timingOf } from './send-start'

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
  /** What outlives a send: earlier output, the idle prompt's facts, the markers seen. */
  readonly #between: BetweenSends
  /** The shell's group, pinned after startup; writes, signals and inspections wait for its look. */
  readonly #pin: ShellGroupPin
  /** What the pin's look asks of the session (one object, not one per look). */
  readonly #pinHooks: PinLookHooks
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
    launched: LaunchedShell = {},
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
    this.#between = new BetweenSends(this.#stream, config.maxReadBytes)
    this.#pin = new ShellGroupPin(handle, this.#stream, this.#ledger)
    this.#pinHooks = {
      closing: () => this.#closeStarted,
      pinned: () => this.#ledger.delivered(this.#screen.size),
      idle: (pinned) => {
        if (!this.#active) this.#between.idleAt(pinned)
      },
    }
    this.#timing = timingOf(config)
    this.#sendSession = {
      inspectForeground: (options) => this.#pin.inspect(options),
      write: (data) => this.#pin.write(data),
      signalForeground: (signal) => this.#pin.after(() => handle.signalForeground(signal)),
      stream: this.#stream,
      status: () => this.status(),
      exited: () => this.#exited || handle.exit !== undefined,
      closing: () => this.#closeStarted,
      // A released send is no longer active when it settles: shown to nobody, it hands nothing back.
      settled: (operation, promptFacts, afterMatch, settledInput) => {
        if (this.#active !== operation) return
        this.#active = undefined
        this.#ledger.settled(this.#screen.size, settledInput)
        this.#between.settled(promptFacts, afterMatch)
      },
    }
    this.#screenSource = {
      alternateScreen: () => this.#stream.alternateScreen,
      verticalMoves: () => this.#stream.verticalMoves,
      snapshot: () => this.#screen.snapshot(),
    }
    this.#stream.attach((chunk, gap) => (this.#active ? this.#active.onChunk(chunk, gap) : this.#between.append(chunk)))
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
        this.#pin.start(operation.shellFacts, this.#pinHooks)
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
   * Take over an adopted terminal (instead of {@link ShellSession.startup}): its replay rebuilds the
   * scrollback and the screen, and what follows `facts.delivered` (the end of the last result its
   * previous client delivered) is the next send's earlier output; the shell group is pinned again.
   */
  adopt(facts: { delivered: number; shellGroup?: number | undefined }): void {
    // The ring no longer reaching back to the delivered end: everything replayed is news.
    if (!this.#ledger.replayUntil(facts.delivered)) this.#between.startEarlier()
    if (facts.shellGroup !== undefined) this.#pin.pin(facts.shellGroup)
    this.#unsubscribe = this.#handle.onOutput((chunk) => this.#take(chunk))
  }

  /** One raw chunk: counted, and split where an adoption's replay reaches output nobody was shown. */
  #take(chunk: Uint8Array): void {
    this.#ledger.take(
      chunk,
      (bytes) => this.#feed(bytes),
      () => this.#between.startEarlier(),
    )
  }

  #feed(chunk: Uint8Array): void {
    this.#stream.write(chunk)
    this.#taps.deliver(chunk)
    this.#observe?.(chunk)
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
    const bytes = typed ?? (size === undefined ? undefined : '')
    const atPrompt = this.#between.takeIdlePrompt()
    const earlier = this.#between.takeEarlier()
    const operation = this.#begin(bytes, false, request.signal, typed === undefined ? undefined : atPrompt, {
      timing: timingFor(this.#timing, request),
      settleOnSilence: request.settleOnSilence,
      waitFor: request.waitFor,
      idleMs: request.idleMs,
      earlier,
      screen: { source: this.#screenSource, movesBefore },
      session:
        size === undefined ? this.#sendSession : resizingSession(this.#sendSession, size, { handle: this.#handle, stream: this.#stream, pin: this.#pin }),
    })
    return operation
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
   * Stop the active send's wait without signalling (its caller is gone: the session was detached).
   * What it took and collected, and everything printed from now on, is the next result's earlier
   * output; the status of the command it ran is reported by the next send. No-op without a send.
   */
  release(): void {
    const operation = this.#active
    if (!operation) return
    // No longer active: the settlement the release causes hands nothing back (see `settled`).
    this.#active = undefined
    const { earlier, buffer } = operation.release()
    this.#between.released(earlier, buffer)
  }

  /** One bounded page of retained scrollback (see {@link readScrollbackPage}); a page ending at the newest line takes the earlier output. */
  read(request: TerminalReadRequest): TerminalReadResult {
    const maxBytes = this.#config.maxReadBytes
    const { result, showsNewest } = readScrollbackPage(this.#stream.scrollback, request, maxBytes)
    if (showsNewest && this.#between.shownByRead()) this.#ledger.delivered(this.#screen.size)
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
    this.#between.personTyped()
    return this.#pin.after(() => this.#handle.write(data))
  }

  /** Deliver `signal` to the foreground group resolved now; the provider's refusals surface unchanged. */
  async signal(signal: TerminalSignal): Promise<TerminalSignalResult> {
    if (this.#closeStarted) throw shellFailure.closed()
    this.#between.forgetPrompt()
    const targetPgid = await this.#pin.after(() => this.#handle.signalForeground(signal))
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
    const idle = this.#between.idleFacts
    const known = idle ? markedInput(stream, idle.program) : undefined
    if (known) return known
    const inputPending = this.#active?.inputPending === true
    const input = await lookAtInput((options) => this.#pin.inspect(options), stream, { wanted: () => !this.#closeStarted, inputPending })
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
    bytes: string | undefined,
    startup: boolean,
    signal?: AbortSignal,
    promptFacts?: ForegroundFacts,
    rules: Pick<SendOptions, 'timing' | 'settleOnSilence' | 'waitFor' | 'idleMs' | 'earlier' | 'screen'> & { session?: SendSession } = { timing: this.#timing },
  ): SendOperation {
    const operation = new SendOperation(rules.session ?? this.#sendSession, {
      bytes,
      startup,
      signal,
      promptFacts,
      // A send without input reports a status that arrived since the latest result, unless a person
      // typed since: then only one that arrives during this send.
      markersBefore: bytes === undefined ? this.#between.markersBefore() : undefined,
      timing: rules.timing,
      settleOnSilence: rules.settleOnSilence,
      waitFor: rules.waitFor,
      idleMs: rules.idleMs,
      earlier: rules.earlier,
      screen: rules.screen,
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
