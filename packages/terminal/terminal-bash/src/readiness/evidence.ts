import { canProveStdinWait, type ForegroundFacts, isNewWait, isStdinWaitProven, isStdinWaitUnproven, type StdinWait } from 'dsh-subprocess'

/** Which exact tier proved readiness: the controlled prompt (A) or a proven new stdin wait (B). */
export type ReadinessProof = 'prompt' | 'stdin'

/**
 * What one sample proves: readiness (`proof`), a candidate that a probe `delayMs` after this sample
 * started could confirm (`follow-up`), or nothing (`none`: the next probe is left to the backoff).
 */
export type Judgement =
  | { readonly kind: 'proof'; readonly proof: ReadinessProof }
  | { readonly kind: 'follow-up'; readonly delayMs: number }
  | { readonly kind: 'none' }

/** One foreground inspection and the output counter at the moment it started. */
export interface ProbeSample {
  /** What the provider reported; `undefined` when there was no foreground group to report. */
  readonly facts: ForegroundFacts | undefined
  /** Monotonic time the inspection started. */
  readonly startedAt: number
  /** Session output arrivals counted when the inspection started. */
  readonly arrivalsAtStart: number
}

/** The byte-stream side of the evidence, read when a sample is judged. */
export interface StreamView {
  /** The latest prompt marker is followed by exactly the controlled prompt. */
  readonly promptReady: boolean
  /** Session output arrivals so far. */
  readonly arrivals: number
  /**
   * The cursor's line has text that arrived after the write (a program waiting for input almost
   * always shows a prompt there; the prompt that was there before the write announces nothing).
   */
  readonly lineHasText: boolean
  /**
   * A program switched to the alternate screen: a full-screen program, which draws its screen and
   * then waits, so an event loop's wait on the terminal counts there even with nothing on the line.
   */
  readonly alternateScreen?: boolean
  /**
   * Where stdin waits cannot be proven (macOS): the group in front printed the marked REPL prompt
   * (Python's), which then counts like the shell's own. Where waits are proven, that proof is stronger.
   */
  readonly replOwns?: (facts: ForegroundFacts) => boolean
}

/** What a send's evidence must hold to count a stdin wait. */
export interface EvidenceRules {
  /** Foreground facts sampled right before the input was written (or the signal was sent). */
  readonly before: ForegroundFacts | undefined
  /**
   * True when input was written (or a signal sent): only a wait that began after `before` proves
   * anything, and a prompt counts only once it held still — it may be one the shell still owed.
   */
  readonly requireNewWait: boolean
  /**
   * Nothing was ever written to this shell (startup): no prompt can be owed, so where waits cannot
   * be proven the shell in front at its prompt counts at once. Any other unproven prompt holds still.
   */
  readonly nothingTyped?: boolean
  /** When set, a stdin wait counts only once arrivals exceed this value (startup prints a prompt first). */
  readonly outputAfter?: number | undefined
  /**
   * When set, a wait of the shell's own group counts only once arrivals exceed this value: `before`
   * was not sampled right before the write, so output (readline's echo) must show the input was read.
   */
  readonly shellOutputAfter?: number | undefined
  /**
   * How long evidence that announces itself weakly must stand still: marker + exact prompt + the
   * shell in front on a platform that can prove stdin waits but did not (bash waiting in a way the
   * provider cannot decode must not hang the send), or a stdin wait with nothing on the cursor's line.
   */
  readonly stillMs: number
}

/**
 * The readiness judgement of one send: combines prompt evidence from the byte stream with foreground
 * facts from probes. Pure bookkeeping: it never schedules anything, so a stale sample can only be
 * judged if its owner chooses to pass it in.
 */
export class ReadinessEvidence {
  #rules: EvidenceRules
  #prompt: HeldWait | undefined
  #candidate: HeldWait | undefined
  /** Threads first found in a brief timed wait, and when: see {@link ReadinessEvidence.#outlived}. */
  #brief: HeldWait | undefined

  /** Starts with the rules of one send. */
  constructor(rules: EvidenceRules) {
    this.#rules = rules
  }

  /** True while a candidate proof waits for confirmation; output that arrives now deserves a prompt probe. */
  get pending(): boolean {
    return this.#candidate !== undefined || this.#prompt !== undefined
  }

  /** Replace the rules (after a cancelling SIGINT: only waits newer than the signal count). */
  rebase(rules: EvidenceRules): void {
    this.#rules = rules
    this.#prompt = undefined
    this.#candidate = undefined
    this.#brief = undefined
  }

  /**
   * Judge one sample. Output that arrived while the inspection ran voids it: the facts may already
   * be stale, and the burst that arrived schedules a fresh probe anyway.
   */
  judge(sample: ProbeSample, view: StreamView): Judgement {
    const { facts } = sample
    const before = this.#rules.before
    const stale = facts !== undefined && before !== undefined && facts.sequence <= before.sequence
    if (facts === undefined || stale || view.arrivals !== sample.arrivalsAtStart) {
      this.#prompt = undefined
      this.#candidate = undefined
      return NOTHING
    }
    const owned = facts.isShellGroup || (!canProveStdinWait(facts) && view.replOwns?.(facts) === true)
    if (view.promptReady && owned) return this.#judgePrompt(sample, facts)
    this.#prompt = undefined
    return this.#judgeStdin(sample, facts, view)
  }

  /**
   * Tier A: marker, exact prompt tail and the shell in front. Where stdin waits are provable the
   * shell must also be blocked reading: readline blocks only once its input queue is empty, so a
   * prompt printed before typed-ahead or multi-line input was consumed does not count.
   * After a write or a signal the prompt may be one the shell owed from before (a command that was
   * still running, or interrupted): it then reads our input and prints another. So the prompt must
   * hold still for `stillMs` — no output, and the shell's wait unchanged (its thread did not run) —
   * before it counts. A send that found the shell idle at its prompt never comes here: its marker
   * can only follow its own input. With nothing written since the sample before, a proven block is
   * enough (readline blocks only with nothing queued); an unproven prompt counts at once only at
   * startup, before anything was ever typed.
   */
  #judgePrompt(sample: ProbeSample, facts: ForegroundFacts): Judgement {
    this.#candidate = undefined
    const blocked = isStdinWaitProven(facts)
    if (!this.#rules.requireNewWait && blocked) return PROMPT_PROOF
    if (this.#rules.nothingTyped && !canProveStdinWait(facts)) return PROMPT_PROOF
    const signature = blocked ? waitSignature(facts.waits) : ''
    // A shell that can be proven blocked but is not yet usually blocks a moment after its prompt.
    const blockSoon = isStdinWaitUnproven(facts)
    const held = this.#prompt
    if (held === undefined || held.arrivals !== sample.arrivalsAtStart || held.signature !== signature) {
      this.#prompt = { signature, arrivals: sample.arrivalsAtStart, since: sample.startedAt }
      return followUp(blockSoon ? FOLLOW_UP_MS : this.#rules.stillMs)
    }
    // Meanwhile keep probing on the backoff; a held wait is confirmed by one probe when its time is up.
    if (blockSoon) return sample.startedAt - held.since >= this.#rules.stillMs ? PROMPT_PROOF : NOTHING
    return this.#onceHeld(held, sample, PROMPT_PROOF)
  }

  /**
   * A wait that ends by itself within {@link BRIEF_WAIT_MS} is a program pausing for a machine (vim
   * at exit waits 100 ms for a terminal's replies before it leaves), not for a person: it counts
   * only once the same threads are found waiting again at least that timeout after they were first
   * seen (running in between, as a program that redraws does, is fine), so the program outlived it
   * and is still there to read. Answers the follow-up that can tell,
   * or `undefined` when the waits are not brief (or were outlived) and the other rules decide.
   */
  #outlived(sample: ProbeSample, facts: ForegroundFacts): Judgement | undefined {
    const timeoutMs = briefTimeout(facts.waits)
    if (timeoutMs === undefined) {
      this.#brief = undefined
      return undefined
    }
    const threads = waitThreads(facts.waits)
    const held = this.#brief
    if (held?.signature !== threads) {
      this.#brief = { signature: threads, arrivals: sample.arrivalsAtStart, since: sample.startedAt }
      this.#candidate = undefined
      return followUp(timeoutMs)
    }
    const remaining = held.since + timeoutMs - sample.startedAt
    return remaining <= 0 ? undefined : followUp(remaining)
  }

  /** `proof` once `held` stood still for `stillMs`; otherwise the follow-up probe that can tell. */
  #onceHeld(held: HeldWait, sample: ProbeSample, proof: Judgement): Judgement {
    const remaining = held.since + this.#rules.stillMs - sample.startedAt
    return remaining <= 0 ? proof : followUp(remaining)
  }

  /**
   * Tier B: a proven stdin wait that began after the write. How much more it takes depends on what
   * announces the wait on the cursor's line:
   * - text there (a REPL prompt, PS2, `read -p`, echoed partial input): another group counts at
   *   once; the shell's own group must show the very same wait twice with no output in between, so
   *   a momentary block while readline still consumes input never counts;
   * - nothing there: the wait must hold still, with no output, for `stillMs` — the program's prompt
   *   may still be on its way through the kernel, and the shell at its primary prompt has always
   *   printed the marker and prompt before it blocks. An epoll wait never counts then: an event loop
   *   keeps stdin registered while it waits for anything else (node does while it exits) — except on
   *   the alternate screen, where a full-screen program on an event loop waits for keys so.
   */
  #judgeStdin(sample: ProbeSample, facts: ForegroundFacts, view: StreamView): Judgement {
    const rules = this.#rules
    const proven =
      isStdinWaitProven(facts) &&
      (rules.outputAfter === undefined || sample.arrivalsAtStart > rules.outputAfter) &&
      (rules.shellOutputAfter === undefined || !facts.isShellGroup || sample.arrivalsAtStart > rules.shellOutputAfter) &&
      (!rules.requireNewWait || isNewWait(rules.before, facts))
    if (!proven) {
      // A brief wait's first sighting stays: a program that redraws between its waits is still there.
      this.#candidate = undefined
      return NOTHING
    }
    const brief = this.#outlived(sample, facts)
    if (brief !== undefined) return brief
    if (view.lineHasText && !facts.isShellGroup) return STDIN_PROOF
    if (!view.lineHasText && !view.alternateScreen && facts.waits.every((wait) => EVENT_LOOP_WAITS.has(wait.syscallName))) {
      this.#candidate = undefined
      return NOTHING
    }
    const signature = waitSignature(facts.waits)
    const candidate = this.#candidate
    if (candidate && candidate.signature === signature && candidate.arrivals === sample.arrivalsAtStart) {
      return view.lineHasText ? STDIN_PROOF : this.#onceHeld(candidate, sample, STDIN_PROOF)
    }
    this.#candidate = { signature, arrivals: sample.arrivalsAtStart, since: sample.startedAt }
    return followUp(FOLLOW_UP_MS)
  }
}

/** Evidence that must stay the same to count: a wait signature, seen at `arrivals`, since `since`. */
interface HeldWait {
  readonly signature: string
  readonly arrivals: number
  readonly since: number
}

/** Nothing proven, and no follow-up asked for. */
const NOTHING: Judgement = { kind: 'none' }
/** Tier A proved readiness. */
const PROMPT_PROOF: Judgement = { kind: 'proof', proof: 'prompt' }
/** Tier B proved readiness. */
const STDIN_PROOF: Judgement = { kind: 'proof', proof: 'stdin' }

/** A candidate that a probe `delayMs` after the sample started could confirm. */
function followUp(delayMs: number): Judgement {
  return { kind: 'follow-up', delayMs }
}

/** A stdin candidate is re-checked this soon: a shell still consuming input shows a changed wait at once. */
const FOLLOW_UP_MS = 1

/** Waits of event loops, whose interest list holds more than the terminal (libuv always has its own fds). */
const EVENT_LOOP_WAITS: ReadonlySet<string> = new Set(['epoll_wait', 'epoll_pwait', 'epoll_pwait2'])

/** A timed wait this short is a pause for a machine; a program waiting for a person refreshes far less often. */
const BRIEF_WAIT_MS = 250

/** The longest timeout when every wait ends by itself within {@link BRIEF_WAIT_MS}; `undefined` otherwise. */
function briefTimeout(waits: readonly StdinWait[]): number | undefined {
  let longest = 0
  for (const wait of waits) {
    if (wait.timeoutMs === undefined || wait.timeoutMs > BRIEF_WAIT_MS) return undefined
    longest = Math.max(longest, wait.timeoutMs)
  }
  return waits.length > 0 ? longest : undefined
}

/** Identity of the waiting threads alone: equal across their own wake-ups. */
function waitThreads(waits: readonly StdinWait[]): string {
  return waits
    .map((w) => `${w.pid}/${w.tid}/${w.started}`)
    .sort()
    .join(' ')
}

/** Identity of a set of waits including their run counters: equal only if no waiting thread ran. */
function waitSignature(waits: readonly StdinWait[]): string {
  return waits
    .map((w) => `${w.pid}/${w.tid}/${w.started}/${w.syscall}/${w.fd}/${w.voluntaryCtxtSwitches}/${w.nonvoluntaryCtxtSwitches}`)
    .sort()
    .join(' ')
}
