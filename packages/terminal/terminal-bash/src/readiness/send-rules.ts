import type { ForegroundFacts } from 'dsh-subprocess'
import type { EvidenceRules, ReadinessProof } from './evidence'
import type { SendBaselines } from './send-baselines'
import { isIdleAtPrompt, isQuietButNotReading, isSingleLine, type SendFacts, type SendOptions, type SendTiming } from './send-contract'
import { afterPollPhase, soon } from './timers'
import type { TerminalStream } from '../session/terminal-stream'

// The timing rules of one send, each in one named function: `SendOperation` calls them and the
// transition table routes their outcomes, so changing a rule is editing one function here.

/** Longest wait for the input state once the ending is decided; past it the result goes without one. */
export const DESCRIBE_BOUND_MS = 1000

/**
 * What the evidence judges against once the send acted: `before`, the facts sampled then; a new wait
 * required after a write or an interrupt; at startup, nothing typed yet and output needed first.
 */
export function evidenceRules(
  options: Pick<SendOptions, 'startup' | 'timing'>,
  baselines: SendBaselines,
  before: ForegroundFacts | undefined,
  requireNewWait: boolean,
  shellOutputAfter: number | undefined,
): EvidenceRules {
  const startup = options.startup === true
  return {
    before,
    requireNewWait,
    nothingTyped: startup && !requireNewWait,
    outputAfter: startup ? baselines.startArrivals : undefined,
    shellOutputAfter,
    stillMs: options.timing.pollIntervalMs,
  }
}

/**
 * The first timed probe's backoff step: 8 ms when the prompt is trusted (a quick command ends
 * first, its marker is the expected end), else 1 ms.
 */
export function firstProbeStep(trustPrompt: boolean): number {
  return trustPrompt ? 4 : 1
}

/**
 * The trusted prompt: the shell sat idle at its prompt before a single-line input (`known`: the
 * previous send ended there and nothing happened since; or the pre-write sample proved it), so
 * its next marker answers this send.
 */
export function trustsPrompt(known: boolean, before: ForegroundFacts | undefined, stream: TerminalStream, input: string): boolean {
  return (known || isIdleAtPrompt(before, stream)) && isSingleLine(input)
}

/** Silence alone may settle the send: not when the caller said no, nor with `waitFor` unless it gave `idleMs`. */
export function settlesOnSilence(options: Pick<SendOptions, 'settleOnSilence' | 'waitFor' | 'idleMs'>): boolean {
  return options.settleOnSilence !== false && (options.waitFor === undefined || options.idleMs !== undefined)
}

/**
 * How long a proof drains before it settles: the prompt one hop past the current poll phase (the
 * exact tail says nothing followed it), a stdin wait a full poll phase (output the program wrote
 * just before it blocked may still be on its way).
 */
export function drainFor(proof: ReadinessProof): typeof soon {
  return proof === 'prompt' ? soon : afterPollPhase
}

/** A drain holds when nothing arrived since it began (`arrivals`), and for the prompt, the prompt still stands. */
export function drainHeld(proof: ReadinessProof, arrivals: number, stream: TerminalStream): boolean {
  return stream.arrivals === arrivals && (proof === 'stdin' || stream.promptReady)
}

/**
 * When silence is due: `idleSilenceMs` after the later of the write and the latest arrival, plus
 * `handoffGraceMs` once a marker was seen. A full-screen program redraws in place (`watch`, a
 * progress display): its output shows no progress a result could carry, so there it counts from the write.
 */
export function silenceDeadline(baselines: SendBaselines, stream: TerminalStream, timing: SendTiming): number {
  const lastActivity = stream.alternateScreen ? Number.NEGATIVE_INFINITY : stream.lastArrivalAt
  return baselines.silenceDeadline(lastActivity, timing.idleSilenceMs + (stream.markerSeen ? timing.handoffGraceMs : 0))
}

/**
 * Silence settles only where readiness cannot be proven: a program proven not to read (the latest
 * sample, taken at `sampledAt` arrivals, after the latest output) is waited for, and looked at again
 * after each further silence. The caller's own `idleMs` lets silence end it anyway, and a
 * full-screen program's screen is its result whether it reads or not.
 */
export function silenceMayEnd(idleMs: number | undefined, stream: TerminalStream, latest: ForegroundFacts | undefined, sampledAt: number): boolean {
  return idleMs !== undefined || stream.alternateScreen || !isQuietButNotReading(latest, sampledAt, stream.arrivals)
}

/**
 * The guard of `silence` in `waiting`: silence ends the send only when the send settles on silence
 * ({@link settlesOnSilence}) and readiness cannot be proven otherwise ({@link silenceMayEnd}). Refused,
 * the send looks again after each further silence.
 */
export function silenceSettles(facts: SendFacts): boolean {
  const { options, stream } = facts
  return settlesOnSilence(options) && silenceMayEnd(options.idleMs, stream, facts.latestSample, facts.latestSampleArrivals)
}

/**
 * Startup before the shell printed anything: nothing can count yet (a stdin wait needs output
 * first, a prompt is output), and inspecting a process that is still in `execve` only slows it.
 */
export function awaitingFirstOutput(startup: boolean, baselines: SendBaselines, arrivals: number): boolean {
  return startup && baselines.outputSinceStart(arrivals) === 0
}

/** Startup's first output just arrived: probes and silence start now. */
export function isStartupFirstOutput(startup: boolean, baselines: SendBaselines, arrivals: number): boolean {
  return startup && baselines.outputSinceStart(arrivals) === 1
}
