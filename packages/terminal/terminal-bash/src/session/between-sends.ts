import type { ForegroundFacts } from 'dsh-subprocess'
import type { TerminalEarlierOutput } from 'dsh-terminal'
import { type SanitizedChunk, SendOutputBuffer } from '../output/index'
import { lineNumberOf } from '../output/line-numbers'
import { joinEarlier } from '../readiness/send-output'
import type { TerminalStream } from './terminal-stream'

/** The shell's latest sample at the prompt a send ended on, and the arrivals then. */
export interface IdlePrompt {
  readonly facts: ForegroundFacts
  readonly arrivals: number
}

/**
 * What outlives a send, owned by the session: the output printed while no send was active, the
 * facts of the prompt the latest send ended on, and the own markers seen by then. A send takes
 * them when it starts and hands the next value back when it settles (see {@link BetweenSends.settled}).
 */
export class BetweenSends {
  /** Output that arrived while no send was active, since the latest result was taken. */
  #earlier: SendOutputBuffer | undefined
  /** What a released send had taken as its earlier output: it goes before {@link BetweenSends.#earlier}. */
  #earlierBefore: TerminalEarlierOutput | undefined
  #idle: IdlePrompt | undefined
  /** Own markers seen when the latest send settled: a send without input reports only a later one. */
  #markersSettled = 0
  /** A person typed since the latest send settled: statuses from then on are theirs, not the agent's. */
  #personTyped = false

  constructor(
    private readonly stream: TerminalStream,
    private readonly maxBytes: number,
  ) {}

  /** A chunk that arrived while no send was active. */
  append(chunk: SanitizedChunk): void {
    this.#earlier?.append(chunk)
  }

  /** From here on, output is news for the next result (startup settled, or an adoption's replay reached the undelivered part). */
  startEarlier(): void {
    this.#earlier = new SendOutputBuffer(this.stream.line, this.maxBytes)
  }

  /**
   * What the session printed since the latest result was taken (a send settled, or a read showed the
   * newest lines), consumed now: the next send's result carries it as earlier output.
   */
  takeEarlier(): TerminalEarlierOutput | undefined {
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

  /** A read showed the newest lines: what was earlier output is shown; true when there was some. */
  shownByRead(): boolean {
    if (!this.#earlier && !this.#earlierBefore) return false
    this.startEarlier()
    this.#earlierBefore = undefined
    return true
  }

  /**
   * The shell is still idle at the prompt the previous send ended on when nothing arrived since
   * (and nothing was written or signalled: every write is a send, and `signal` forgets it). Then the
   * send needs no pre-write inspection. Taken once: the next send re-establishes it.
   */
  takeIdlePrompt(): ForegroundFacts | undefined {
    const idle = this.#idle
    this.#idle = undefined
    return idle && idle.arrivals === this.stream.arrivals && this.stream.promptReady ? idle.facts : undefined
  }

  /** The idle prompt's sample while nothing arrived since (not taken). */
  get idleFacts(): ForegroundFacts | undefined {
    const idle = this.#idle
    return idle && idle.arrivals === this.stream.arrivals ? idle.facts : undefined
  }

  /** The startup pin's look found the shell idle at its prompt: the first send may use that sample. */
  idleAt(idle: IdlePrompt): void {
    this.#idle = idle
  }

  /** Something may have moved the shell from its prompt (a signal, a person's keys, a released send). */
  forgetPrompt(): void {
    this.#idle = undefined
  }

  /** A person typed: the shell may have left its prompt, and statuses from now on are theirs. */
  personTyped(): void {
    this.#idle = undefined
    this.#personTyped = true
  }

  /**
   * The own-marker count a send without input reports a status after: one that arrived since the
   * latest result, unless a person typed since (then only one that arrives during the send).
   */
  markersBefore(): number {
    return this.#personTyped ? this.stream.markers : this.#markersSettled
  }

  /**
   * A send settled and its result reaches its caller: `promptFacts` when it ended on the prompt,
   * `afterMatch` the output that followed a `waitFor` match (the next result's earlier output).
   */
  settled(promptFacts: ForegroundFacts | undefined, afterMatch: SendOutputBuffer | undefined): void {
    this.#earlier = afterMatch ?? new SendOutputBuffer(this.stream.line, this.maxBytes)
    this.#markersSettled = this.stream.markers
    this.#personTyped = false
    this.#idle = promptFacts ? { facts: promptFacts, arrivals: this.stream.arrivals } : undefined
  }

  /**
   * A send was released (its caller is gone): what it took and collected, and what its live buffer
   * goes on taking, is the next result's earlier output.
   */
  released(earlier: TerminalEarlierOutput | undefined, buffer: SendOutputBuffer | undefined): void {
    this.#idle = undefined
    this.#earlierBefore = joinEarlier(this.#earlierBefore, earlier)
    this.#earlier = buffer ?? new SendOutputBuffer(this.stream.line, this.maxBytes)
  }
}
