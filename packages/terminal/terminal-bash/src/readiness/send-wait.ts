import type { ForegroundFacts } from 'dsh-subprocess'
import { ownsPrompt } from '../input/input-state'
import { type ProbeSample, type ReadinessProof, ReadinessEvidence } from './evidence'
import { ForegroundProber, type ProbeTarget } from './foreground-prober'
import type { SendBaselines } from './send-baselines'
import { isPromptOwnerWaiting, type SendOptions, type SendSession } from './send-contract'
import {
  awaitingFirstOutput,
  drainFor,
  drainHeld,
  evidenceRules,
  firstProbeStep,
  isStartupFirstOutput,
  settlesOnSilence,
  silenceDeadline,
  trustsPrompt,
} from './send-rules'
import type { SendEvent } from './send-transitions'
import { afterPollPhase, inMs, now, type PendingCallbacks } from './timers'

/** The timers of one send, in one bag: the wait owns `silence` and `drain`, the send the others. */
export type SendTimerSlot = 'timeout' | 'silence' | 'grace' | 'drain' | 'abort' | 'describe'

/** How the send's table answered an event: accepted or not, and a follow-up probe delay a judged sample asked for. */
export interface Reply {
  readonly accepted: boolean
  readonly followUpMs?: number | undefined
}

/** What the wait needs of its send: where the send stands, and its table. */
export interface WaitHost {
  /** The send's baselines now (a new value whenever it acts). */
  readonly baselines: SendBaselines
  /** The send is still `waiting` (silence is looked at again only then). */
  readonly waiting: boolean
  /** Report `event` to the send's table. */
  report(event: SendEvent): Reply
}

/**
 * The evidence one send gathers while it waits: the trusted prompt, the foreground probes and their
 * judgement, the drain after a proof and the silence clock. It decides nothing itself: every
 * outcome is an event reported to the send's table, which may ignore it.
 */
export class SendWait implements ProbeTarget {
  readonly #session: SendSession
  readonly #options: SendOptions
  readonly #pending: PendingCallbacks<SendTimerSlot>
  readonly #host: WaitHost
  readonly #evidence: ReadinessEvidence
  readonly #prober: ForegroundProber
  /** The shell sat idle at its prompt before a single-line input: its next marker answers this send. */
  #trustPrompt = false
  /** The latest sample of the prompt's owner waiting: a prompt ending leaves it idle. */
  #shellFacts: ForegroundFacts | undefined
  /** The latest judged sample: a stdin proof is described from it. */
  #latest: ForegroundFacts | undefined
  /** Output arrivals when that sample started. */
  #latestArrivals = -1

  constructor(session: SendSession, options: SendOptions, pending: PendingCallbacks<SendTimerSlot>, host: WaitHost) {
    this.#session = session
    this.#options = options
    this.#pending = pending
    this.#host = host
    this.#evidence = new ReadinessEvidence(evidenceRules(options, host.baselines, undefined, false, undefined))
    this.#prober = new ForegroundProber(this, options.timing.pollIntervalMs)
  }

  /** The latest sample of the shell (or the REPL whose prompt is marked) waiting, if one was taken. */
  get shellFacts(): ForegroundFacts | undefined {
    return this.#shellFacts
  }

  /** The latest judged sample, if any. */
  get latestSample(): ForegroundFacts | undefined {
    return this.#latest
  }

  /** Output arrivals when {@link SendWait.latestSample} started (-1 before the first). */
  get latestSampleArrivals(): number {
    return this.#latestArrivals
  }

  inspect(): Promise<ForegroundFacts | undefined> {
    return this.#session.inspectForeground()
  }

  arrivals(): number {
    return this.#session.stream.arrivals
  }

  onSample(sample: ProbeSample): number | undefined {
    return this.#host.report({ kind: 'sample', sample }).followUpMs
  }

  /**
   * The send is about to write `bytes` after the pre-write `facts` (`known`: the idle prompt's older
   * sample, so a wait of the shell's own group also needs output after the write): rebase, and
   * decide whether the prompt is trusted.
   */
  wrote(facts: ForegroundFacts | undefined, known: boolean, bytes: string): void {
    const stream = this.#session.stream
    this.#noteShell(facts)
    this.#evidence.rebase(evidenceRules(this.#options, this.#host.baselines, facts, true, known ? stream.arrivals : undefined))
    this.#trustPrompt = trustsPrompt(known, facts, stream, bytes)
  }

  /** A send without input waits from now. At startup nothing was ever typed: the controlled prompt is the shell reading its first line. */
  waitsWithoutInput(): void {
    this.#evidence.rebase(evidenceRules(this.#options, this.#host.baselines, undefined, false, undefined))
    this.#trustPrompt = this.#options.startup === true
  }

  /** The send interrupts the foreground sampled as `before`: only a new wait after it counts. */
  interrupted(before: ForegroundFacts | undefined): void {
    this.#evidence.rebase(evidenceRules(this.#options, this.#host.baselines, before, true, undefined))
  }

  /** Arm the silence clock, start probing (startup: at its first output), look at the prompt. */
  start(): void {
    this.#armSilence()
    // With a trusted prompt the marker is the expected end; probes are for what else may happen.
    if (!this.#awaitingFirstOutput()) this.#prober.start(firstProbeStep(this.#trustPrompt))
    if (this.#session.stream.promptReady) this.#host.report({ kind: 'prompt' })
  }

  /** Startup held probes and silence until the shell printed something: start them at its first output. */
  startupOutput(): void {
    if (!isStartupFirstOutput(this.#options.startup === true, this.#host.baselines, this.#session.stream.arrivals)) return
    this.#prober.start(firstProbeStep(this.#trustPrompt))
    this.#armSilence()
  }

  /** Output arrived after a gap of `gapMs`: probe once this burst's callbacks are done. */
  noteBurst(gapMs: number): void {
    // A trusted prompt whose marker arrived: what follows is that prompt on its way (bash writes the
    // marker and the prompt apart). A probe now would only hold up reading it; the backoff's still run.
    if (this.#trustPrompt && this.#session.stream.markerSeen) return
    this.#prober.noteOutput(this.#host.baselines.burstGap(gapMs, now()), this.#evidence.pending)
  }

  /** The prompt answers a send that found the shell idle: drain and settle. Otherwise probe now. */
  answerPrompt(): void {
    if (this.#trustPrompt) this.#beginDrain('prompt', this.#session.stream.arrivals)
    else this.#prober.probeNow()
  }

  /** Probe now, ignoring the backoff. */
  probeNow(): void {
    this.#prober.probeNow()
  }

  /** Probe again with a fresh backoff. */
  resumeProbes(): void {
    this.#prober.start()
  }

  /** No probe, drain or silence counts for now (the send's SIGINT is not delivered yet). */
  hold(): void {
    this.#prober.pause()
    this.#pending.clear('drain', 'silence')
  }

  /** No more probes, ever (the ending is decided). */
  stopProbes(): void {
    this.#prober.stop()
  }

  /**
   * Only text that arrived after the write (or the interrupt) announces a wait; an old prompt does
   * not. A proof starts the drain; a candidate answers when a follow-up probe could confirm it.
   */
  judge(sample: ProbeSample): number | undefined {
    this.#noteShell(sample.facts)
    this.#latest = sample.facts
    this.#latestArrivals = sample.arrivalsAtStart
    const stream = this.#session.stream
    const lineHasText = stream.line.length > 0 && this.#host.baselines.announces(sample.arrivalsAtStart)
    const replOwns = stream.promptKind === 'repl' ? (facts: ForegroundFacts) => ownsPrompt(facts, stream) : undefined
    const view = { promptReady: stream.promptReady, arrivals: stream.arrivals, lineHasText, alternateScreen: stream.alternateScreen, replOwns }
    const judgement = this.#evidence.judge(sample, view)
    if (judgement.kind === 'proof') this.#beginDrain(judgement.proof, sample.arrivalsAtStart)
    return judgement.kind === 'follow-up' ? judgement.delayMs : undefined
  }

  /** Remember a sample of the shell (or the REPL whose prompt is marked) waiting: a prompt ending leaves it idle. */
  #noteShell(facts: ForegroundFacts | undefined): void {
    if (isPromptOwnerWaiting(facts, this.#session.stream)) this.#shellFacts = facts
  }

  /** Settle after a proof, unless output arrives first (how long: {@link drainFor}). */
  #beginDrain(proof: ReadinessProof, arrivals: number): void {
    if (this.#pending.has('drain')) return
    // No probe runs meanwhile: its synchronous /proc work would only delay the drain.
    this.#prober.pause()
    this.#pending.set('drain', drainFor(proof), () => {
      this.#host.report(drainHeld(proof, arrivals, this.#session.stream) ? { kind: 'drained', proof } : { kind: 'drain-broken' })
    })
  }

  #awaitingFirstOutput(): boolean {
    return awaitingFirstOutput(this.#options.startup === true, this.#host.baselines, this.#session.stream.arrivals)
  }

  #silenceDeadline(): number {
    return silenceDeadline(this.#host.baselines, this.#session.stream, this.#options.timing)
  }

  /** Tier C: one timer, re-armed lazily when it fires early (never per chunk). Lives only while waiting. */
  #armSilence(): void {
    this.#pending.clear('silence')
    if (this.#awaitingFirstOutput() || !settlesOnSilence(this.#options)) return
    this.#pending.set('silence', inMs(this.#silenceDeadline() - now()), () => this.#silenceDue())
  }

  #silenceDue(): void {
    if (now() < this.#silenceDeadline()) return this.#armSilence()
    // Silence means nothing arrived, not nothing was read: let a poll phase deliver what is pending.
    const arrivals = this.#session.stream.arrivals
    this.#pending.set('silence', afterPollPhase, () => {
      if (this.#session.stream.arrivals !== arrivals || now() < this.#silenceDeadline()) return this.#armSilence()
      // Refused by its guard (`silenceSettles`: a program proven not to read is waited for): look again after each further silence.
      if (!this.#host.report({ kind: 'silence' }).accepted && this.#host.waiting) {
        this.#pending.set('silence', inMs(this.#options.timing.idleSilenceMs), () => this.#silenceDue())
      }
    })
  }
}
