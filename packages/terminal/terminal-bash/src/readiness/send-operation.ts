import type { ForegroundFacts } from 'dsh-subprocess'
import type { TerminalSendOperation, TerminalSendRead, TerminalSendResult, TerminalWaitReason } from 'dsh-terminal'
import { type SanitizedChunk, SendOutputBuffer } from '../output/index'
import { type ProbeSample, type ReadinessProof, ReadinessEvidence } from './evidence'
import { ForegroundProber } from './foreground-prober'
import { isIdleAtPrompt, isShellWaiting, isSingleLine, type SendHost, type SendOptions, type SendPhase } from './send-contract'
import { repeatIfSwallowed } from './swallowed-sigint'
import { after, afterPollPhase, type Cancel, now, soon } from './timers'

export type { SendHost, SendOptions, SendPhase, SendTiming } from './send-contract'

/** Backoff step of the first timed probe when the prompt is trusted (8 ms: a quick command ends first). */
const TRUSTED_FIRST_STEP = 4

/**
 * One send and every phase it goes through, as one object: pre-write inspection, the write, event-
 * driven waiting (prompt, proven stdin wait, silence, timeout, exit), cancellation and settlement.
 * Timers, probes, drains and writes that outlive their phase are inert: each one re-checks the
 * phase it was started for, and settling stops all of them.
 */
export class SendOperation implements TerminalSendOperation {
  /** Settles on readiness, timeout, cancellation or exit; rejects only if the provider's write failed unexpectedly. */
  readonly done: Promise<TerminalSendResult>
  /** Settles once the send no longer acts on the session: after `done` and after a cancelling SIGINT landed. */
  readonly released: Promise<void>
  readonly #host: SendHost
  readonly #options: SendOptions
  readonly #evidence: ReadinessEvidence
  readonly #prober: ForegroundProber
  #resolveDone!: (result: TerminalSendResult) => void
  #rejectDone!: (error: unknown) => void
  #resolveReleased!: () => void
  #phase: SendPhase = 'inspecting'
  #buffer: SendOutputBuffer | undefined
  #write: Promise<void> | undefined
  #startArrivals = 0
  #announceAfter = 0
  #silenceFrom = 0
  #timeout: Cancel | undefined
  #silence: Cancel | undefined
  #grace: Cancel | undefined
  #drain: Cancel | undefined
  #trustPrompt = false
  /** Startup holds its first probe until the shell printed something (see `#awaitingFirstOutput`). */
  #probingDeferred = false
  #lastShellFacts: ForegroundFacts | undefined
  #endedOnPrompt = false
  /**
   * The stream's own-marker count after which a marker is this send's: set at the write, at the
   * interrupt of a send cancelled before writing, or (without input) when the wait begins.
   */
  #markersBefore: number | undefined
  #cancelling: Promise<void> | undefined
  #detachAbort: (() => void) | undefined

  /** Prepares the send; nothing happens until {@link SendOperation.start}. */
  constructor(host: SendHost, options: SendOptions) {
    this.#host = host
    this.#options = options
    this.done = new Promise((resolve, reject) => {
      this.#resolveDone = resolve
      this.#rejectDone = reject
    })
    this.released = new Promise((resolve) => {
      this.#resolveReleased = resolve
    })
    this.#evidence = new ReadinessEvidence(this.#rules(undefined, false, undefined))
    this.#prober = new ForegroundProber(
      {
        inspect: () => host.inspectForeground(),
        arrivals: () => host.stream.arrivals,
        onSample: (sample) => this.#onSample(sample),
      },
      options.timing.pollIntervalMs,
    )
  }

  /** The current phase (for the session and for tests). */
  get phase(): SendPhase {
    return this.#phase
  }

  /** When the send ended on the shell's prompt: the latest sample of the shell waiting there. */
  get idleFacts(): ForegroundFacts | undefined {
    return this.#endedOnPrompt ? this.#lastShellFacts : undefined
  }

  /** Foreground inspections started by this send's prober (for tests and diagnostics). */
  get probes(): number {
    return this.#prober.probes
  }

  /** Start: arm the timeout, inspect, then write (or, without input, go straight to waiting). */
  start(): void {
    const { signal, timing } = this.#options
    this.#startArrivals = this.#host.stream.arrivals
    this.#announceAfter = this.#startArrivals
    this.#timeout = after(timing.timeoutMs, () => this.#settle('timeout'))
    if (this.#host.exited()) return this.#settle('session_exit')
    if (signal) {
      if (signal.aborted) {
        this.cancel()
        return
      }
      const onAbort = () => this.cancel()
      signal.addEventListener('abort', onAbort, { once: true })
      this.#detachAbort = () => signal.removeEventListener('abort', onAbort)
    }
    if (this.#options.input === undefined) {
      this.#markersBefore = this.#options.markersBefore ?? this.#host.stream.markers
      this.#evidence.rebase(this.#rules(undefined, false, undefined))
      this.#openBuffer()
      this.#silenceFrom = now()
      this.#enterWaiting()
      return
    }
    if (this.#options.idle) return this.#afterInspection(this.#options.idle, true)
    this.#host.inspectForeground().then(
      (facts) => this.#afterInspection(facts, false),
      () => this.#afterInspection(undefined, false),
    )
  }

  /** Take one sanitized chunk (already in the scrollback); ignored before the write and once settled. */
  onChunk(chunk: SanitizedChunk, gapMs: number): void {
    const buffer = this.#buffer
    if (!buffer || this.#phase === 'settled') return
    buffer.append(chunk)
    if (this.#phase !== 'waiting' && this.#phase !== 'cancelling') return
    if (this.#probingDeferred) {
      this.#probingDeferred = false
      this.#prober.start()
    }
    if (this.#promptArrived()) return
    // A quiet gap counts from the write at the earliest: the echo right after it is not a new burst.
    const gap = Math.min(gapMs, now() - this.#silenceFrom)
    this.#prober.noteOutput(gap, this.#evidence.pending)
    if (this.#phase === 'waiting' && !this.#silence) this.#armSilence()
  }

  /** The top-level process exited (every output chunk was already delivered). */
  onExit(): void {
    this.#settle('session_exit')
  }

  /** The session is closing: settle as `session_exit` and never signal. */
  abandon(): void {
    this.#settle('session_exit')
  }

  /** Consume the output produced since the previous read. */
  readOutput(): TerminalSendRead {
    return this.#buffer ? this.#buffer.readOutput() : { delta: '', truncated: false }
  }

  /**
   * Interrupt: input not yet written is never written, a write in flight is let land, then a real
   * SIGINT goes to the foreground group; the send settles on the next exact readiness or after
   * `cancelGraceMs`. Returns false once settled.
   */
  cancel(): boolean {
    if (this.#phase === 'settled') return false
    if (this.#phase === 'cancelling') return true
    const previous = this.#phase
    this.#phase = 'cancelling'
    this.#prober.pause()
    this.#drain?.()
    this.#drain = undefined
    this.#silence?.()
    this.#silence = undefined
    this.#cancelling = this.#interrupt(previous).finally(() => {
      this.#cancelling = undefined
      this.#releaseIfIdle()
    })
    return true
  }

  #rules(before: ForegroundFacts | undefined, requireNewWait: boolean, shellOutputAfter: number | undefined) {
    return {
      before,
      requireNewWait,
      nothingTyped: this.#options.startup === true && !requireNewWait,
      outputAfter: this.#options.startup ? this.#startArrivals : undefined,
      shellOutputAfter,
      stillMs: this.#options.timing.pollIntervalMs,
    }
  }

  /**
   * Write, unless cancelled meanwhile. `known` means the facts are the idle prompt's latest sample
   * rather than a fresh pre-write one: the prompt is trusted as the inspection would have shown,
   * and a wait of the shell's own group then also needs output after the write.
   */
  #afterInspection(facts: ForegroundFacts | undefined, known: boolean): void {
    if (this.#phase !== 'inspecting') return
    const stream = this.#host.stream
    this.#noteShell(facts)
    this.#evidence.rebase(this.#rules(facts, true, known ? stream.arrivals : undefined))
    const idle = known || isIdleAtPrompt(facts, stream.promptReady)
    this.#trustPrompt = idle && isSingleLine(this.#options.input as string)
    this.#phase = 'writing'
    stream.resetPrompt()
    this.#openBuffer()
    this.#silenceFrom = now()
    this.#announceAfter = stream.arrivals
    this.#markersBefore = stream.markers
    const write = this.#host.write(this.#options.input as string)
    this.#write = write
    write.then(
      () => {
        if (this.#phase === 'writing') this.#enterWaiting()
      },
      (error: unknown) => this.#writeFailed(error),
    )
  }

  #writeFailed(error: unknown): void {
    if (this.#phase === 'settled') return
    // After exit the provider refuses writes; the exit notification settles the send with all output.
    if (this.#host.exited()) return
    this.#phase = 'settled'
    this.#stopAll()
    this.#rejectDone(error)
    this.#host.settled(this)
    this.#releaseIfIdle()
  }

  #openBuffer(): void {
    this.#buffer ??= new SendOutputBuffer(this.#host.stream.line, this.#options.maxBytes)
  }

  #enterWaiting(): void {
    this.#phase = 'waiting'
    this.#armSilence()
    // With a trusted prompt the marker is the expected end; probes are for what else may happen.
    this.#probingDeferred = this.#awaitingFirstOutput()
    if (!this.#probingDeferred) this.#prober.start(this.#trustPrompt ? TRUSTED_FIRST_STEP : 1)
    this.#promptArrived()
  }

  /**
   * The session's own marker and the exact prompt just completed. When the shell was idle at its
   * prompt before a single-line input, that marker can only follow our command (bash prints its
   * prompt once it owns the terminal again), so no inspection is needed: drain and settle. Otherwise
   * inspect now — the prompt counts only with the shell in front and, where provable, blocked reading.
   */
  #promptArrived(): boolean {
    if (!this.#host.stream.promptReady) return false
    if (this.#trustPrompt && this.#phase === 'waiting') {
      this.#beginDrain('prompt', this.#host.stream.arrivals)
      return true
    }
    this.#prober.probeNow()
    return false
  }

  #onSample(sample: ProbeSample): number | undefined {
    if (this.#phase !== 'waiting' && this.#phase !== 'cancelling') return undefined
    this.#noteShell(sample.facts)
    const stream = this.#host.stream
    // Only text that arrived after the write (or the interrupt) announces a wait; an old prompt does not.
    const lineHasText = stream.line.length > 0 && sample.arrivalsAtStart > this.#announceAfter
    const proof = this.#evidence.judge(sample, { promptReady: stream.promptReady, arrivals: stream.arrivals, lineHasText })
    if (proof) this.#beginDrain(proof, sample.arrivalsAtStart)
    return this.#evidence.followUpMs
  }

  /**
   * Settle after a proof, unless output arrives first. A stdin-wait proof holds for the moment it
   * was sampled, and output the program wrote just before it blocked may still be on its way
   * through the kernel: let a full poll phase pass and settle only if nothing arrived meanwhile.
   * The prompt proof needs less: the exact tail means nothing followed the prompt, so one hop past
   * the current poll phase (chunks delivered together with it) suffices.
   */
  #beginDrain(proof: ReadinessProof, arrivals: number): void {
    if (this.#drain) return
    // No probe runs meanwhile: its synchronous /proc work would only delay the drain.
    this.#prober.pause()
    const check = () => {
      this.#drain = undefined
      if (this.#phase !== 'waiting' && this.#phase !== 'cancelling') return
      const stream = this.#host.stream
      if (stream.arrivals === arrivals && (proof === 'stdin' || stream.promptReady)) {
        this.#endedOnPrompt = proof === 'prompt'
        return this.#settle('stdin_read')
      }
      this.#prober.start()
    }
    this.#drain = proof === 'prompt' ? soon(check) : afterPollPhase(check)
  }

  /**
   * Startup before the shell printed anything: nothing can count yet (a stdin wait needs output
   * first, a prompt is output), and inspecting a process that is still in `execve` only slows it.
   */
  #awaitingFirstOutput(): boolean {
    return this.#options.startup === true && this.#host.stream.arrivals === this.#startArrivals
  }

  #silenceDeadline(): number {
    const { idleSilenceMs, handoffGraceMs } = this.#options.timing
    const stream = this.#host.stream
    const grace = stream.markerSeen ? handoffGraceMs : 0
    return Math.max(this.#silenceFrom, stream.lastArrivalAt) + idleSilenceMs + grace
  }

  /** Tier C: one timer, re-armed lazily when it fires early (never per chunk). */
  #armSilence(): void {
    this.#silence?.()
    this.#silence = undefined
    if (this.#options.startup && this.#host.stream.arrivals === this.#startArrivals) return
    this.#silence = after(this.#silenceDeadline() - now(), () => this.#checkSilence())
  }

  #checkSilence(): void {
    this.#silence = undefined
    if (this.#phase !== 'waiting') return
    if (now() < this.#silenceDeadline()) return this.#armSilence()
    // Silence means nothing arrived, not nothing was read: let a poll phase deliver what is pending.
    const arrivals = this.#host.stream.arrivals
    this.#silence = afterPollPhase(() => {
      this.#silence = undefined
      if (this.#phase !== 'waiting') return
      if (this.#host.stream.arrivals !== arrivals || now() < this.#silenceDeadline()) return this.#armSilence()
      this.#settle('inferred_idle')
    })
  }

  async #interrupt(previous: SendPhase): Promise<void> {
    const host = this.#host
    if (previous === 'writing' && this.#write) {
      let stop: Cancel | undefined
      await Promise.race([this.#write.catch(() => undefined), new Promise<void>((resolve) => (stop = after(this.#options.timing.cancelGraceMs, resolve)))])
      stop?.()
    }
    this.#openBuffer()
    if (host.exited() || host.closing()) return this.#settle('session_exit')
    const before = await host.inspectForeground().catch(() => undefined)
    if (host.exited() || host.closing()) return this.#settle('session_exit')
    if (this.#phase !== 'settled') {
      host.stream.resetPrompt()
      this.#announceAfter = host.stream.arrivals
      // Cancelled before the write: the prompt that answers this send's own SIGINT is its result.
      this.#markersBefore ??= host.stream.markers
      this.#evidence.rebase(this.#rules(before, true, undefined))
    }
    // The grace runs from the moment the signal is requested, so a slow delivery cannot stretch `done`.
    if (this.#phase !== 'settled') this.#grace = after(this.#options.timing.cancelGraceMs, () => this.#settle('timeout'))
    let target: number
    try {
      target = await host.signalForeground('SIGINT')
    } catch {
      // No foreground group (the shell is going away) or a refusal: the grace or the exit settles the send.
      return
    }
    if (this.#phase === 'settled') return
    this.#prober.start()
    await repeatIfSwallowed(host, target, {
      cancelGraceMs: this.#options.timing.cancelGraceMs,
      settled: this.done,
      pending: () => this.#phase !== 'settled',
    })
  }

  #noteShell(facts: ForegroundFacts | undefined): void {
    if (isShellWaiting(facts)) this.#lastShellFacts = facts
  }

  #stopAll(): void {
    this.#prober.stop()
    for (const cancel of [this.#timeout, this.#silence, this.#grace, this.#drain]) cancel?.()
    this.#timeout = this.#silence = this.#grace = this.#drain = undefined
    this.#detachAbort?.()
    this.#detachAbort = undefined
  }

  #settle(reason: TerminalWaitReason): void {
    if (this.#phase === 'settled') return
    this.#phase = 'settled'
    this.#stopAll()
    const { viewport, truncated } = this.#buffer ? this.#buffer.settle() : { viewport: '', truncated: false }
    const result: TerminalSendResult = { viewport, waitReason: reason, sessionStatus: this.#host.status(), truncated }
    // Only a marker that arrived after this send acted carries the status of what it ran, interrupted
    // or (without input) waited for. A send that never wrote, e.g. because the shell was already gone,
    // reports none: never the status of an earlier command.
    const status = this.#markersBefore === undefined ? undefined : this.#host.stream.statusSince(this.#markersBefore)
    if (status !== undefined) result.exitCode = status
    this.#resolveDone(result)
    this.#host.settled(this)
    this.#releaseIfIdle()
  }

  #releaseIfIdle(): void {
    if (this.#phase === 'settled' && !this.#cancelling) this.#resolveReleased()
  }
}
