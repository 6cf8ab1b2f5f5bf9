/** The stream counters a baseline is read from (a `TerminalStream`). */
export interface StreamCounters {
  /** Output chunks that arrived so far. */
  readonly arrivals: number
  /** Own prompt markers seen so far. */
  readonly markers: number
}

/**
 * Where one send stood in the session's output when it acted on the shell: when it started, and
 * when it last wrote, began to wait or interrupted. Every "after the write" rule of a send is
 * measured against these numbers. A value: each act makes a new one, so no two fields can disagree.
 */
export class SendBaselines {
  /** Arrivals when the send started; startup counts output beyond it as the shell's first. */
  readonly startArrivals: number
  /** Only text that arrived after this many arrivals announces a wait (an older prompt does not). */
  readonly announceAfter: number
  /**
   * The own-marker count after which a marker is this send's; `undefined` until the send wrote,
   * began to wait or interrupted (a send that never acted reports no exit status).
   */
  readonly markersBefore: number | undefined
  /** Silence (and a quiet gap before a burst) is measured from here at the earliest: the write, or the wait's start. */
  readonly silenceFrom: number

  private constructor(startArrivals: number, announceAfter: number, markersBefore: number | undefined, silenceFrom: number) {
    this.startArrivals = startArrivals
    this.announceAfter = announceAfter
    this.markersBefore = markersBefore
    this.silenceFrom = silenceFrom
  }

  /** A send that starts now, before it acted. */
  static startingAt(stream: StreamCounters): SendBaselines {
    return new SendBaselines(stream.arrivals, stream.arrivals, undefined, 0)
  }

  /** The input was handed to the provider at `at`: only later text, markers and silence count. */
  wrote(stream: StreamCounters, at: number): SendBaselines {
    return new SendBaselines(this.startArrivals, stream.arrivals, stream.markers, at)
  }

  /** A send without input begins to wait at `at`; a marker counts after `markersBefore`. */
  waitsFrom(markersBefore: number, at: number): SendBaselines {
    return new SendBaselines(this.startArrivals, this.announceAfter, markersBefore, at)
  }

  /**
   * The foreground is about to be interrupted: only later text announces a wait. A send cancelled
   * before it wrote takes the marker that answers its own SIGINT as its result.
   */
  interrupted(stream: StreamCounters): SendBaselines {
    return new SendBaselines(this.startArrivals, stream.arrivals, this.markersBefore ?? stream.markers, this.silenceFrom)
  }

  /** Output chunks since the send started. */
  outputSinceStart(arrivals: number): number {
    return arrivals - this.startArrivals
  }

  /** Text counted at `arrivals` arrived after the send acted, so it can announce a wait. */
  announces(arrivals: number): boolean {
    return arrivals > this.announceAfter
  }

  /** A quiet gap before output, measured from the write at the earliest (its echo is not a new burst). */
  burstGap(gapMs: number, at: number): number {
    return Math.min(gapMs, at - this.silenceFrom)
  }

  /** When silence since the later of this baseline and `lastArrivalAt` has lasted `quietMs`. */
  silenceDeadline(lastArrivalAt: number, quietMs: number): number {
    return Math.max(this.silenceFrom, lastArrivalAt) + quietMs
  }
}
