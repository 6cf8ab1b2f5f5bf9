import type { ForegroundFacts } from 'dsh-subprocess'
import type { ProbeSample } from './evidence'
import { after, type Cancel, now, soon } from './timers'

/** What the prober needs from its send. */
export interface ProbeTarget {
  /** One foreground inspection (the provider's `inspectForeground`). */
  inspect(): Promise<ForegroundFacts | undefined>
  /** Session output arrivals so far. */
  arrivals(): number
  /**
   * Judge a finished sample; return a delay (ms after that sample started) to ask for a follow-up
   * probe then instead of on the backoff. Not called once stopped.
   */
  onSample(sample: ProbeSample): number | undefined
}

/** A quiet gap this long (or as long as the current backoff) makes the next output a new burst. */
const BURST_GAP_MS = 10

/**
 * Schedules foreground inspections for one send: right after each output burst (in the check phase,
 * once the current data callbacks are done), then with exponential backoff — 0, 1, 2, 4 … ms capped
 * at `maxDelayMs` — while probes find nothing. Output after a quiet gap (10 ms, or the current
 * delay if shorter) restarts the backoff, so a new burst is probed at once, while a continuous
 * flood keeps its probes spaced out. At most one inspection is in flight; a stopped prober is inert.
 */
export class ForegroundProber {
  readonly #target: ProbeTarget
  readonly #maxDelayMs: number
  #running = false
  #stopped = false
  #inFlight = false
  #again = false
  #backoffStep = 0
  #lastStart = Number.NEGATIVE_INFINITY
  #timer: Cancel | undefined
  #timerDue = Number.POSITIVE_INFINITY
  #burst: Cancel | undefined
  #generation = 0

  /** `maxDelayMs` bounds the gap between probes while nothing happens (the config's `pollIntervalMs`). */
  constructor(target: ProbeTarget, maxDelayMs: number) {
    this.#target = target
    this.#maxDelayMs = maxDelayMs
  }

  /**
   * Begin (or restart) probing with a fresh backoff; a no-op once stopped. The first probe runs
   * after the first output burst or backoff step `step` (1 ms for step 1, 2^(step-1) ms), whichever
   * comes first: right after a write nothing can have changed yet, and the probe's synchronous
   * /proc work would only delay the output that is about to arrive.
   */
  start(step = 1): void {
    if (this.#stopped) return
    this.#running = true
    this.#backoffStep = step
    this.#lastStart = now()
    this.#request(false)
  }

  /** Stop until the next {@link ForegroundProber.start}; a result still in flight is dropped. */
  pause(): void {
    this.#running = false
    this.#generation += 1
    this.#again = false
    this.#clearTimer()
    this.#burst?.()
    this.#burst = undefined
  }

  /** Stop for good: pending timers are cleared and an in-flight result is dropped. */
  stop(): void {
    this.#stopped = true
    this.pause()
  }

  /**
   * Output arrived `gapMs` after the previous output: probe when this burst's callbacks are done.
   * `fresh` (a candidate proof was open, so this is likely the output it was waiting for) skips
   * the backoff for that probe.
   */
  noteOutput(gapMs: number, fresh = false): void {
    if (!this.#running) return
    if (fresh || gapMs >= Math.min(this.#delay(), BURST_GAP_MS)) this.#backoffStep = 0
    if (this.#burst) return
    this.#burst = soon(() => {
      this.#burst = undefined
      this.#request(false)
    })
  }

  /** Probe as soon as possible, ignoring the backoff (the prompt and marker just arrived). */
  probeNow(): void {
    if (!this.#running) return
    this.#request(true)
  }

  #delay(): number {
    return this.#backoffStep === 0 ? 0 : Math.min(2 ** (this.#backoffStep - 1), this.#maxDelayMs)
  }

  #request(urgent: boolean): void {
    if (!this.#running) return
    if (this.#inFlight) {
      this.#again ||= urgent
      return
    }
    const due = urgent ? now() : this.#lastStart + this.#delay()
    this.#schedule(due)
  }

  #schedule(due: number): void {
    const wait = due - now()
    if (wait <= 0) {
      this.#clearTimer()
      void this.#run()
      return
    }
    if (this.#timer && this.#timerDue <= due) return
    this.#clearTimer()
    this.#timerDue = due
    this.#timer = after(wait, () => {
      this.#timer = undefined
      this.#timerDue = Number.POSITIVE_INFINITY
      void this.#run()
    })
  }

  #clearTimer(): void {
    this.#timer?.()
    this.#timer = undefined
    this.#timerDue = Number.POSITIVE_INFINITY
  }

  async #run(): Promise<void> {
    if (!this.#running || this.#inFlight) return
    const generation = this.#generation
    this.#inFlight = true
    const startedAt = now()
    const arrivalsAtStart = this.#target.arrivals()
    this.#lastStart = startedAt
    let facts: ForegroundFacts | undefined
    try {
      facts = await this.#target.inspect()
    } catch {
      facts = undefined
    }
    this.#inFlight = false
    if (generation !== this.#generation) {
      // Paused (and perhaps restarted) meanwhile: the sample predates the new rules, drop it.
      this.#again = false
      if (this.#running) this.#schedule(now())
      return
    }
    this.#backoffStep += 1
    const followUp = this.#target.onSample({ facts, startedAt, arrivalsAtStart })
    if (!this.#running) return
    if (this.#again) {
      this.#again = false
      this.#schedule(now())
    } else {
      // Output that arrived meanwhile is probed on the backoff schedule, so a flood stays spaced out.
      this.#schedule(startedAt + (followUp ?? this.#delay()))
    }
  }
}
