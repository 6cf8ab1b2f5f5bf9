import type { ForegroundFacts } from 'dsh-subprocess'
import type { TerminalEarlierOutput, TerminalInputState, TerminalSendOperation, TerminalSendRead, TerminalSendResult } from 'dsh-terminal'
import { showsScreen } from '../screen/screen-send'
import { markedInput } from '../input/input-state'
import type { SanitizedChunk, SendOutputBuffer } from '../output/index'
import { SendBaselines } from './send-baselines'
import { isTypedAhead, lineCount, type SendFacts, type SendOptions, type SendSession } from './send-contract'
import { type InterruptTarget, interruptForeground } from './send-interrupt'
import { describeInput, settledResult } from './send-result'
import { type EarlierPart, joinEarlier, SendOutput } from './send-output'
import { DESCRIBE_BOUND_MS } from './send-rules'
import { type ResultEnding, type SendEnding, type SendEvent, type SendPhase, type SendSteps, PHASE_ENTRY, transitionFor } from './send-transitions'
import { type Reply, type SendTimerSlot, SendWait, type WaitHost } from './send-wait'
import { inMs, now, onAbort, PendingCallbacks } from './timers'

const IGNORED: Reply = { accepted: false }
const ACCEPTED: Reply = { accepted: true }

/**
 * One send as a state machine: pre-write inspection, the write, event-driven waiting (prompt, proven
 * stdin wait, silence, timeout, exit), cancellation and settlement. Every timer, probe, drain, write
 * and interrupt continuation reports an event; the table `SEND_TRANSITIONS` alone decides whether the
 * current phase takes it and where it moves, so a stale one is ignored in that one place.
 */
export class SendOperation implements TerminalSendOperation {
  /** Settles on readiness, timeout, cancellation or exit; rejects only if the provider's write failed unexpectedly. */
  readonly done: Promise<TerminalSendResult>
  /** Settles once the send no longer acts on the session: after `done` and after a cancelling SIGINT landed. */
  readonly released: Promise<void>
  readonly #session: SendSession
  readonly #options: SendOptions
  /** Everything that can call back into the send; all cancelled when it settles. */
  readonly #pending = new PendingCallbacks<SendTimerSlot>()
  readonly #steps: SendSteps & SendFacts & WaitHost
  /** The evidence the send gathers while it waits (probes, drain, silence). */
  readonly #wait: SendWait
  #resolveDone!: (result: TerminalSendResult) => void
  #rejectDone!: (error: unknown) => void
  #resolveReleased!: () => void
  #phase: SendPhase = 'inspecting'
  #baselines: SendBaselines
  readonly #output: SendOutput
  #write: Promise<void> | undefined
  /** The ending decided while the input state is told. */
  #decided: ResultEnding | undefined
  /** The cancelling interrupt while it runs; `released` waits for it. */
  #interruption: Promise<void> | undefined
  /** The result's screen while it renders; `done` and `released` wait for it. */
  #showing: Promise<void> | undefined

  /** Prepares the send and takes its start baselines; nothing else happens until {@link SendOperation.start}. */
  constructor(session: SendSession, options: SendOptions) {
    this.#session = session
    this.#options = options
    this.done = new Promise((resolve, reject) => {
      this.#resolveDone = resolve
      this.#rejectDone = reject
    })
    this.released = new Promise((resolve) => {
      this.#resolveReleased = resolve
    })
    this.#output = new SendOutput(session.stream.line, options.maxBytes, options.waitFor)
    this.#baselines = SendBaselines.startingAt(session.stream)
    const steps = new SendOperation.#Steps(this)
    this.#steps = steps
    this.#wait = new SendWait(session, options, this.#pending, steps)
  }

  /**
   * The steps the transition table runs, the facts its guards read and the wait's host, as one
   * object per send whose methods live on the prototype: no closures are built per send. Each step
   * does its work here, over the operation's state (a nested class reads its private fields), so
   * an event costs the table one hop; the operation keeps the public face and the settlement.
   */
  static readonly #Steps = class implements SendSteps, SendFacts, WaitHost {
    readonly #operation: SendOperation
    constructor(operation: SendOperation) {
      this.#operation = operation
    }
    get options(): SendOptions {
      return this.#operation.#options
    }
    get stream(): SendSession['stream'] {
      return this.#operation.#session.stream
    }
    get latestSample(): ForegroundFacts | undefined {
      return this.#operation.#wait.latestSample
    }
    get latestSampleArrivals(): number {
      return this.#operation.#wait.latestSampleArrivals
    }
    get baselines(): SendBaselines {
      return this.#operation.#baselines
    }
    get wait(): SendWait {
      return this.#operation.#wait
    }
    get decided(): ResultEnding | undefined {
      return this.#operation.#decided
    }
    get waiting(): boolean {
      return this.#operation.#phase === 'waiting'
    }
    collect(chunk: SanitizedChunk): void {
      this.#operation.#output.collect(chunk)
    }
    stopEvidence(): void {
      const operation = this.#operation
      operation.#wait.stopProbes()
      operation.#pending.clear('silence', 'drain', 'grace', 'timeout', 'abort')
    }
    waitWithoutInput(): void {
      const operation = this.#operation
      const stream = operation.#session.stream
      operation.#baselines = operation.#baselines.waitsFrom(operation.#options.markersBefore ?? stream.markers, now())
      operation.#wait.waitsWithoutInput()
      operation.#output.open()
      operation.#output.watch(0, 0)
      operation.#wait.start()
    }
    /** Collect a chunk, or end the wait when `waitFor` matches in it (reports `matched`). */
    collectOrMatch(chunk: SanitizedChunk): boolean {
      const operation = this.#operation
      const match = operation.#output.collectOrMatch(chunk)
      if (match) this.report({ kind: 'matched', match })
      return match !== undefined
    }
    /** Evidence gathering already stopped on entering `interrupting` (see `PHASE_ENTRY`) until the SIGINT is delivered. */
    interrupt(writeInFlight: boolean): void {
      const operation = this.#operation
      const target: InterruptTarget = {
        session: operation.#session,
        write: operation.#write,
        cancelGraceMs: operation.#options.timing.cancelGraceMs,
        openOutput: () => operation.#output.open(),
        report: (event) => void this.report(event),
      }
      operation.#interruption = interruptForeground(target, writeInFlight).finally(() => {
        operation.#interruption = undefined
        operation.#releaseIfDone()
      })
    }
    rebaseForInterrupt(before: ForegroundFacts | undefined): void {
      const operation = this.#operation
      operation.#actOnShell(operation.#baselines.interrupted(operation.#session.stream))
      operation.#wait.interrupted(before)
      // The grace runs from the moment the signal is requested, so a slow delivery cannot stretch `done`.
      operation.#pending.set('grace', inMs(operation.#options.timing.cancelGraceMs), () => this.report({ kind: 'grace' }))
    }
    /**
     * The one place events enter: the table says whether the current phase accepts `event` and which
     * phase follows. The phase moves before the step runs, so a step may report further events.
     */
    report(event: SendEvent): Reply {
      const operation = this.#operation
      const transition = transitionFor(operation.#phase, event, this)
      if (!transition) return IGNORED
      const from = operation.#phase
      operation.#phase = transition.to
      if (transition.to !== from) PHASE_ENTRY[transition.to]?.act(this)
      const followUpMs = transition.act?.(this, event)
      return typeof followUpMs === 'number' ? { accepted: true, followUpMs } : ACCEPTED
    }
    /**
     * `known` means the facts are the idle prompt's latest sample rather than a fresh pre-write one:
     * the prompt is trusted as the inspection would have shown, and a wait of the shell's own group
     * then also needs output after the write.
     */
    write(facts: ForegroundFacts | undefined, known: boolean): void {
      const operation = this.#operation
      const stream = operation.#session.stream
      const bytes = operation.#options.bytes as string
      operation.#wait.wrote(facts, known, bytes)
      operation.#output.open()
      operation.#output.watch(stream.line.number, lineCount(bytes))
      if (isTypedAhead(facts)) operation.#output.typedAhead((chunk) => stream.ownPromptLine(chunk))
      operation.#actOnShell(operation.#baselines.wrote(stream, now()))
      const write = operation.#session.write(bytes)
      operation.#write = write
      write.then(
        () => this.report({ kind: 'written' }),
        (error: unknown) => {
          // After exit the provider refuses writes; the exit notification settles the send with all output.
          if (!operation.#session.exited()) this.report({ kind: 'write-failed', error })
        },
      )
    }
    /**
     * The ending is decided; tell what the terminal waits for. The marker says it at once (the shell's
     * prompt or continuation, or a REPL's when the sample that found it waiting was of that REPL);
     * otherwise one inspection (the stdin proof's own sample when there is one), and a second with the
     * terminal's flags only when a program is proven to read.
     */
    describe(ending: ResultEnding): void {
      const operation = this.#operation
      // Probes and timers already stopped on entering `describing` (see `PHASE_ENTRY`).
      operation.#decided = ending
      const stream = operation.#session.stream
      const marked = ending.proof === 'prompt' ? markedInput(stream, operation.#wait.shellFacts?.program) : undefined
      if (marked) return void this.report({ kind: 'described', input: marked })
      operation.#pending.set('describe', inMs(DESCRIBE_BOUND_MS), () => this.report({ kind: 'described', input: undefined }))
      // Settled meanwhile (the bound, or the exit): nothing more is asked of the provider.
      const wanted = () => operation.#phase === 'describing'
      const report = (input: TerminalInputState | undefined) => void this.report({ kind: 'described', input })
      describeInput(operation.#session, ending.proof === 'stdin' ? operation.#wait.latestSample : undefined, wanted, report)
    }
    /** The one way out (see {@link SendSteps.finish}). */
    finish(ending: SendEnding, input?: TerminalInputState): void {
      const operation = this.#operation
      operation.#wait.stopProbes()
      operation.#pending.clearAll()
      if (ending.kind === 'error') operation.#rejectDone(ending.error)
      else operation.#settle(settledResult(ending, input, operation.#output, operation.#session, operation.#baselines, operation.#options.earlier))
      // What outlives the send goes back to the session: the prompt it ended on, and what followed a match.
      const promptFacts = ending.kind === 'result' && ending.proof === 'prompt' ? operation.#wait.shellFacts : undefined
      operation.#session.settled(operation, promptFacts, operation.#output.afterMatch, input)
      operation.#releaseIfDone()
    }
  }

  /**
   * The send has input nothing answered yet: not yet written, or written with no output since. Until
   * then whoever is in front has not taken it up, so a look at the terminal cannot say it waits.
   */
  get inputPending(): boolean {
    return Boolean(this.#options.bytes) && this.#phase !== 'settled' && this.#session.stream.arrivals === this.#baselines.announceAfter
  }

  /** Start: arm the timeout, then inspect and write (or, without input, go straight to waiting). */
  start(): void {
    const { signal, timing, bytes, promptFacts } = this.#options
    this.#pending.set('timeout', inMs(timing.timeoutMs), () => this.#steps.report({ kind: 'timeout' }))
    if (this.#session.exited()) {
      this.#steps.report({ kind: 'exit' })
      return
    }
    if (signal?.aborted) {
      this.cancel()
      return
    }
    if (signal) this.#pending.set('abort', onAbort(signal), () => this.cancel())
    if (bytes === undefined) this.#steps.report({ kind: 'no-input' })
    else if (promptFacts) this.#steps.report({ kind: 'inspected', facts: promptFacts, known: true })
    else {
      this.#session.inspectForeground().then(
        (facts) => this.#steps.report({ kind: 'inspected', facts, known: false }),
        () => this.#steps.report({ kind: 'inspected', facts: undefined, known: false }),
      )
    }
  }

  /** Take one sanitized chunk (already in the scrollback). */
  onChunk(chunk: SanitizedChunk, gapMs: number): void {
    this.#steps.report({ kind: 'output', chunk, gapMs })
    if (this.#session.stream.promptReady) this.#steps.report({ kind: 'prompt' })
  }

  /** The top-level process exited (every output chunk was already delivered). */
  onExit(): void {
    this.#steps.report({ kind: 'exit' })
  }

  /** The session is closing: settle as `session_exit` and never signal. */
  abandon(): void {
    this.#steps.report({ kind: 'exit' })
  }

  /**
   * Stop waiting without signalling (the caller is gone, the session is detached): settle as
   * `session_exit` for nobody, and hand back what this send was to show, so the session keeps it as
   * earlier output: the earlier part it took, and its live buffer, which goes on taking output.
   */
  release(): { earlier: EarlierPart | undefined; buffer: SendOutputBuffer | undefined } {
    const earlier = joinEarlier(this.#options.earlier, this.#output.earlier)
    const buffer = this.#output.handOver()
    this.#steps.report({ kind: 'exit' })
    return { earlier, buffer }
  }

  /** The session's earlier output this send took when it started (see `TerminalSendOperation.earlier`). */
  get earlier(): TerminalEarlierOutput | undefined {
    return this.#options.earlier
  }

  /** The send's latest sample of the prompt's owner waiting, if it took one: startup pins the shell's group from it. */
  get shellFacts(): ForegroundFacts | undefined {
    return this.#wait.shellFacts
  }

  /** Consume the output produced since the previous read. */
  readOutput(): TerminalSendRead {
    return this.#output.read()
  }

  /**
   * Interrupt: input not yet written is never written, a write in flight is let land, then a real
   * SIGINT goes to the foreground group; the send settles on the next exact readiness or after
   * `cancelGraceMs`. Returns false once settled.
   */
  cancel(): boolean {
    return this.#steps.report({ kind: 'cancel' }).accepted
  }

  /**
   * The send acts on the shell (its write, or its interrupt once `interrupt-ready` is accepted): the
   * one place its baselines move to now and the prompt seen before is forgotten, so only a marker
   * that arrives later counts. Never at the signal itself: an interrupt that answers after the
   * ending was decided must not wipe the prompt a description still reads.
   */
  #actOnShell(baselines: SendBaselines): void {
    this.#baselines = baselines
    this.#session.stream.resetPrompt()
  }

  /**
   * Resolve `done` with `result`, carrying the screen when {@link showsScreen} says so: then `done`
   * waits for the rendering, and `released` for `done`, so the reservation covers the screen too.
   */
  #settle(result: TerminalSendResult): void {
    const screen = this.#options.screen
    if (!screen || !showsScreen(result, screen.source, screen.movesBefore)) return this.#resolveDone(result)
    this.#showing = screen.source
      .snapshot()
      .then(
        (snapshot) => this.#resolveDone({ ...result, screen: snapshot }),
        // The session closed meanwhile: the result stands without a screen.
        () => this.#resolveDone(result),
      )
      .finally(() => {
        this.#showing = undefined
        this.#releaseIfDone()
      })
  }

  #releaseIfDone(): void {
    if (this.#phase === 'settled' && !this.#interruption && !this.#showing) this.#resolveReleased()
  }
}
