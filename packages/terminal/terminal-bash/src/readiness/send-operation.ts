import type { ForegroundFacts } from 'dsh-subprocess'
import type { TerminalInputState, TerminalSendOperation, TerminalSendRead, TerminalSendResult } from 'dsh-terminal'
import { markedInput } from '../input/input-state'
import type { SanitizedChunk, SendOutputBuffer } from '../output/index'
import type { ProbeSample } from './evidence'
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
  readonly #steps: SendSteps & SendFacts
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
   * object per send whose methods live on the prototype: no closures are built per send.
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
    get waiting(): boolean {
      return this.#operation.#phase === 'waiting'
    }
    report(event: SendEvent): Reply {
      return this.#operation.#dispatch(event)
    }
    write(facts: ForegroundFacts | undefined, known: boolean): void {
      this.#operation.#writeInput(facts, known)
    }
    waitWithoutInput(): void {
      this.#operation.#waitWithoutInput()
    }
    startWaiting(): void {
      this.#operation.#wait.start()
    }
    collect(chunk: SanitizedChunk): void {
      this.#operation.#output.collect(chunk)
    }
    collectOrMatch(chunk: SanitizedChunk): boolean {
      return this.#operation.#collectOrMatch(chunk)
    }
    startupOutput(): void {
      this.#operation.#wait.startupOutput()
    }
    noteBurst(gapMs: number): void {
      this.#operation.#wait.noteBurst(gapMs)
    }
    answerPrompt(): void {
      this.#operation.#wait.answerPrompt()
    }
    probeNow(): void {
      this.#operation.#wait.probeNow()
    }
    judge(sample: ProbeSample): number | undefined {
      return this.#operation.#wait.judge(sample)
    }
    resumeProbes(): void {
      this.#operation.#wait.resumeProbes()
    }
    holdEvidence(): void {
      this.#operation.#wait.hold()
    }
    stopEvidence(): void {
      const operation = this.#operation
      operation.#wait.stopProbes()
      operation.#pending.clear('silence', 'drain', 'grace', 'timeout', 'abort')
    }
    interrupt(writeInFlight: boolean): void {
      this.#operation.#beginInterrupt(writeInFlight)
    }
    rebaseForInterrupt(before: ForegroundFacts | undefined): void {
      this.#operation.#rebaseForInterrupt(before)
    }
    describe(ending: ResultEnding): void {
      this.#operation.#describe(ending)
    }
    finish(ending: SendEnding, input?: TerminalInputState): void {
      this.#operation.#finish(ending, input)
    }
    finishDescribed(input: TerminalInputState | undefined): void {
      const operation = this.#operation
      operation.#finish(operation.#decided ?? { kind: 'result', reason: 'timeout' }, input)
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
    this.#pending.set('timeout', inMs(timing.timeoutMs), () => this.#dispatch({ kind: 'timeout' }))
    if (this.#session.exited()) {
      this.#dispatch({ kind: 'exit' })
      return
    }
    if (signal?.aborted) {
      this.cancel()
      return
    }
    if (signal) this.#pending.set('abort', onAbort(signal), () => this.cancel())
    if (bytes === undefined) this.#dispatch({ kind: 'no-input' })
    else if (promptFacts) this.#dispatch({ kind: 'inspected', facts: promptFacts, known: true })
    else {
      this.#session.inspectForeground().then(
        (facts) => this.#dispatch({ kind: 'inspected', facts, known: false }),
        () => this.#dispatch({ kind: 'inspected', facts: undefined, known: false }),
      )
    }
  }

  /** Take one sanitized chunk (already in the scrollback). */
  onChunk(chunk: SanitizedChunk, gapMs: number): void {
    this.#dispatch({ kind: 'output', chunk, gapMs })
    if (this.#session.stream.promptReady) this.#dispatch({ kind: 'prompt' })
  }

  /** The top-level process exited (every output chunk was already delivered). */
  onExit(): void {
    this.#dispatch({ kind: 'exit' })
  }

  /** The session is closing: settle as `session_exit` and never signal. */
  abandon(): void {
    this.#dispatch({ kind: 'exit' })
  }

  /**
   * Stop waiting without signalling (the caller is gone, the session is detached): settle as
   * `session_exit` for nobody, and hand back what this send was to show, so the session keeps it as
   * earlier output: the earlier part it took, and its live buffer, which goes on taking output.
   */
  release(): { earlier: EarlierPart | undefined; buffer: SendOutputBuffer | undefined } {
    const earlier = joinEarlier(this.#options.earlier, this.#output.earlier)
    const buffer = this.#output.handOver()
    this.#dispatch({ kind: 'exit' })
    return { earlier, buffer }
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
    return this.#dispatch({ kind: 'cancel' }).accepted
  }

  /**
   * The one place events enter: the table says whether the current phase accepts `event` and which
   * phase follows. The phase moves before the step runs, so a step may report further events.
   */
  #dispatch(event: SendEvent): Reply {
    const transition = transitionFor(this.#phase, event, this.#steps)
    if (!transition) return IGNORED
    const from = this.#phase
    this.#phase = transition.to
    if (transition.to !== from) PHASE_ENTRY[transition.to]?.act(this.#steps)
    const followUpMs = transition.act?.(this.#steps, event)
    return typeof followUpMs === 'number' ? { accepted: true, followUpMs } : ACCEPTED
  }

  /**
   * `known` means the facts are the idle prompt's latest sample rather than a fresh pre-write one:
   * the prompt is trusted as the inspection would have shown, and a wait of the shell's own group
   * then also needs output after the write.
   */
  #writeInput(facts: ForegroundFacts | undefined, known: boolean): void {
    const stream = this.#session.stream
    const bytes = this.#options.bytes as string
    this.#wait.wrote(facts, known, bytes)
    this.#output.open()
    this.#output.watch(stream.line.number, lineCount(bytes))
    if (isTypedAhead(facts)) this.#output.typedAhead((chunk) => stream.ownPromptLine(chunk))
    this.#actOnShell(this.#baselines.wrote(stream, now()))
    const write = this.#session.write(bytes)
    this.#write = write
    write.then(
      () => this.#dispatch({ kind: 'written' }),
      (error: unknown) => {
        // After exit the provider refuses writes; the exit notification settles the send with all output.
        if (!this.#session.exited()) this.#dispatch({ kind: 'write-failed', error })
      },
    )
  }

  #waitWithoutInput(): void {
    const stream = this.#session.stream
    this.#baselines = this.#baselines.waitsFrom(this.#options.markersBefore ?? stream.markers, now())
    this.#wait.waitsWithoutInput()
    this.#output.open()
    this.#output.watch(0, 0)
    this.#wait.start()
  }

  /** Collect a chunk, or end the wait when `waitFor` matches in it (reports `matched`). */
  #collectOrMatch(chunk: SanitizedChunk): boolean {
    const match = this.#output.collectOrMatch(chunk)
    if (match) this.#dispatch({ kind: 'matched', match })
    return match !== undefined
  }

  /** Evidence gathering already stopped on entering `interrupting` (see `PHASE_ENTRY`) until the SIGINT is delivered. */
  #beginInterrupt(writeInFlight: boolean): void {
    const target: InterruptTarget = {
      session: this.#session,
      write: this.#write,
      cancelGraceMs: this.#options.timing.cancelGraceMs,
      openOutput: () => this.#output.open(),
      report: (event) => void this.#dispatch(event),
    }
    this.#interruption = interruptForeground(target, writeInFlight).finally(() => {
      this.#interruption = undefined
      this.#releaseIfDone()
    })
  }

  #rebaseForInterrupt(before: ForegroundFacts | undefined): void {
    this.#actOnShell(this.#baselines.interrupted(this.#session.stream))
    this.#wait.interrupted(before)
    // The grace runs from the moment the signal is requested, so a slow delivery cannot stretch `done`.
    this.#pending.set('grace', inMs(this.#options.timing.cancelGraceMs), () => this.#dispatch({ kind: 'grace' }))
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
   * The ending is decided; tell what the terminal waits for. The marker says it at once (the shell's
   * prompt or continuation, or a REPL's when the sample that found it waiting was of that REPL);
   * otherwise one inspection (the stdin proof's own sample when there is one), and a second with the
   * terminal's flags only when a program is proven to read.
   */
  #describe(ending: ResultEnding): void {
    // Probes and timers already stopped on entering `describing` (see `PHASE_ENTRY`).
    this.#decided = ending
    const stream = this.#session.stream
    const marked = ending.proof === 'prompt' ? markedInput(stream, this.#wait.shellFacts?.program) : undefined
    if (marked) return void this.#dispatch({ kind: 'described', input: marked })
    this.#pending.set('describe', inMs(DESCRIBE_BOUND_MS), () => this.#dispatch({ kind: 'described', input: undefined }))
    // Settled meanwhile (the bound, or the exit): nothing more is asked of the provider.
    const wanted = () => this.#phase === 'describing'
    const report = (input: TerminalInputState | undefined) => void this.#dispatch({ kind: 'described', input })
    describeInput(this.#session, ending.proof === 'stdin' ? this.#wait.latestSample : undefined, wanted, report)
  }

  #finish(ending: SendEnding, input?: TerminalInputState): void {
    this.#wait.stopProbes()
    this.#pending.clearAll()
    if (ending.kind === 'error') this.#rejectDone(ending.error)
    else this.#resolveDone(settledResult(ending, input, this.#output, this.#session, this.#baselines, this.#options.earlier))
    // What outlives the send goes back to the session: the prompt it ended on, and what followed a match.
    const promptFacts = ending.kind === 'result' && ending.proof === 'prompt' ? this.#wait.shellFacts : undefined
    this.#session.settled(this, promptFacts, this.#output.afterMatch, input)
    this.#releaseIfDone()
  }

  #releaseIfDone(): void {
    if (this.#phase === 'settled' && !this.#interruption) this.#resolveReleased()
  }
}
