import type { ForegroundFacts } from 'dsh-subprocess'
import type { TerminalInputState, TerminalOutputMatch, TerminalWaitReason } from 'dsh-terminal'
import type { SanitizedChunk } from '../output/index'
import type { ProbeSample, ReadinessProof } from './evidence'
import type { SendFacts } from './send-contract'
import { silenceSettles } from './send-rules'

/**
 * Where a send is. `inspecting`: sampling the foreground before writing; `writing`: input handed to
 * the provider; `waiting`: collecting evidence; `interrupting`: cancelled, its SIGINT not yet
 * delivered; `cancelling`: SIGINT delivered, waiting for exact readiness; `describing`: the ending
 * is decided, the input state is being told; `settled`: final.
 */
export type SendPhase = 'inspecting' | 'writing' | 'waiting' | 'interrupting' | 'cancelling' | 'describing' | 'settled'

/** Everything that can happen to a send; which phase accepts what is {@link SEND_TRANSITIONS}. */
export type SendEvent =
  /** The pre-write foreground sample is in; `known`: it is the idle prompt's older sample. */
  | { readonly kind: 'inspected'; readonly facts: ForegroundFacts | undefined; readonly known: boolean }
  /** The send has nothing to write (startup, or an empty send): it only waits. */
  | { readonly kind: 'no-input' }
  /** The provider took the input. */
  | { readonly kind: 'written' }
  /** The provider refused the input while the shell still runs. */
  | { readonly kind: 'write-failed'; readonly error: unknown }
  /** A sanitized chunk arrived `gapMs` after the previous one. */
  | { readonly kind: 'output'; readonly chunk: SanitizedChunk; readonly gapMs: number }
  /** This shell's marker followed by exactly its prompt, cursor at the end. */
  | { readonly kind: 'prompt' }
  /** A foreground probe finished. */
  | { readonly kind: 'sample'; readonly sample: ProbeSample }
  /** Nothing arrived while a proof drained: it holds. */
  | { readonly kind: 'drained'; readonly proof: ReadinessProof }
  /** Output arrived while a proof drained (or the prompt it relied on is gone). */
  | { readonly kind: 'drain-broken' }
  /** Nothing arrived for `idleSilenceMs` (+ handoff grace), checked past a poll phase. */
  | { readonly kind: 'silence' }
  /** `timeoutMs` since the send started. */
  | { readonly kind: 'timeout' }
  /** The top-level process exited (all output delivered), or the session is closing. */
  | { readonly kind: 'exit' }
  /** `cancel()` or the caller's abort. */
  | { readonly kind: 'cancel' }
  /** The interrupt's own foreground sample is in; the SIGINT is about to be requested. */
  | { readonly kind: 'interrupt-ready'; readonly before: ForegroundFacts | undefined }
  /** The SIGINT was delivered. */
  | { readonly kind: 'signalled' }
  /** `cancelGraceMs` since the SIGINT was requested. */
  | { readonly kind: 'grace' }
  /** Output after the write matched the send's `waitFor`. */
  | { readonly kind: 'matched'; readonly match: TerminalOutputMatch }
  /** The input state at the decided ending is told (`undefined`: it could not be). */
  | { readonly kind: 'described'; readonly input: TerminalInputState | undefined }

/** How a send ends: a result, or the provider's write failure (which rejects `done`). */
export type SendEnding = ResultEnding | { readonly kind: 'error'; readonly error: unknown }

/** A send that ends with a result: why, the exact proof behind `stdin_read`, and what `waitFor` matched. */
export interface ResultEnding {
  readonly kind: 'result'
  readonly reason: TerminalWaitReason
  readonly proof?: ReadinessProof
  readonly match?: TerminalOutputMatch
}

/** The steps of waiting a transition runs on the send's wait (`SendWait`): probes, bursts, the prompt. */
export interface WaitSteps {
  /** Arm the silence clock, start probing (startup: at its first output), look at the prompt. */
  start(): void
  /** Startup held probes and silence until the shell printed something: start them at its first output. */
  startupOutput(): void
  /** Output arrived after a gap of `gapMs`: probe once this burst's callbacks are done. */
  noteBurst(gapMs: number): void
  /** The prompt answers a send that found the shell idle: drain and settle. Otherwise probe now. */
  answerPrompt(): void
  /** Probe now, ignoring the backoff. */
  probeNow(): void
  /** Judge a sample; a proof starts the drain. Answers the follow-up probe delay it asks for, if any. */
  judge(sample: ProbeSample): number | undefined
  /** Probe again with a fresh backoff. */
  resumeProbes(): void
  /** Entering `interrupting`: no probe, drain or silence counts until the SIGINT is delivered. */
  hold(): void
}

/**
 * What a transition may do on the way; the send implements each step over its own state. A step is
 * where its work happens (no step forwards to another method), so an event costs the table one hop.
 */
export interface SendSteps {
  /** The wait's steps, called on it directly. */
  readonly wait: WaitSteps
  /** The ending {@link SendSteps.describe} decided, once it did. */
  readonly decided: ResultEnding | undefined
  /** Rebase the evidence on the pre-write facts, decide whether the prompt is trusted, write. */
  write(facts: ForegroundFacts | undefined, known: boolean): void
  /** Begin a wait without input: baselines from now, then the wait's start. */
  waitWithoutInput(): void
  /** Keep a chunk for the send's result. */
  collect(chunk: SanitizedChunk): void
  /**
   * Keep a chunk, unless it matches the send's `waitFor`: then keep it up to the matching line,
   * hold the rest for the session, and report `matched`. True when it matched.
   */
  collectOrMatch(chunk: SanitizedChunk): boolean
  /** Entering `describing`: the ending is decided, so probes and every timer but the describe bound stop. */
  stopEvidence(): void
  /** Start the interrupt (after letting a write in flight land). */
  interrupt(writeInFlight: boolean): void
  /** Baselines and evidence from the interrupt's sample; the cancel grace starts. */
  rebaseForInterrupt(before: ForegroundFacts | undefined): void
  /** The ending is decided: stop gathering evidence and tell the input state (at once when the marker says it). */
  describe(ending: ResultEnding): void
  /** The one way out: stop everything, settle `done` (with the input state when told), tell the session. */
  finish(ending: SendEnding, input?: TerminalInputState): void
}

/** The ending of a send that was described without a decided ending (cannot happen; the bound's reason). */
const UNDECIDED: ResultEnding = { kind: 'result', reason: 'timeout' }

/** Where an accepted event moves the send, and what it does on the way (a sample's step answers a follow-up delay). */
export interface Transition<E extends SendEvent = SendEvent> {
  readonly to: SendPhase
  /** What the step does, in a few words: the readiness note's table is generated from these (`pnpm docs:gen`). */
  readonly says: string
  readonly act?: (steps: SendSteps, event: E) => number | undefined | void
  /** The phase accepts the event only when this holds for the send's facts (absent: always); a named rule of `send-rules.ts`. */
  readonly when?: (facts: SendFacts) => boolean
}

type EventOf<K extends SendEvent['kind']> = Extract<SendEvent, { kind: K }>
type Row = { readonly [K in SendEvent['kind']]?: Transition<EventOf<K>> }

const end = (reason: TerminalWaitReason, says = `\`${reason}\``): Transition => ({
  to: 'describing',
  says,
  act: (s) => s.describe({ kind: 'result', reason }),
})
const timedOut = end('timeout')
const exited: Transition = { to: 'settled', says: '`session_exit`', act: (s) => s.finish({ kind: 'result', reason: 'session_exit' }) }
const writeFailed: Transition<EventOf<'write-failed'>> = { to: 'settled', says: 'reject', act: (s, e) => s.finish({ kind: 'error', error: e.error }) }
const drained: Transition<EventOf<'drained'>> = {
  to: 'describing',
  says: '`stdin_read`',
  act: (s, e) => s.describe({ kind: 'result', reason: 'stdin_read', proof: e.proof }),
}
const matched: Transition<EventOf<'matched'>> = {
  to: 'describing',
  says: '`output_match`',
  act: (s, e) => s.describe({ kind: 'result', reason: 'output_match', match: e.match }),
}
const judged = (to: SendPhase): Transition<EventOf<'sample'>> => ({
  to,
  says: 'judge: drain a proof, or ask a follow-up',
  act: (s, e) => s.wait.judge(e.sample),
})
const probesAgain = (to: SendPhase): Transition => ({ to, says: 'probes again', act: (s) => s.wait.resumeProbes() })

/**
 * The send's phases × events. An event a phase does not list is ignored: a stale timer, probe,
 * drain or write continuation finds nothing to do. Phases only move forward. `silence` settles a
 * waiting send only when its guard `silenceSettles` holds for the send's facts. Every result but `session_exit` passes through
 * `describing`, which only tells the input state: output is still kept, the exit still wins.
 */
export const SEND_TRANSITIONS: { readonly [P in SendPhase]: Row } = {
  inspecting: {
    inspected: { to: 'writing', says: 'rebase, write', act: (s, e) => s.write(e.facts, e.known) },
    'no-input': { to: 'waiting', says: '', act: (s) => s.waitWithoutInput() },
    cancel: { to: 'interrupting', says: '', act: (s) => s.interrupt(false) },
    timeout: timedOut,
    exit: exited,
  },
  writing: {
    written: { to: 'waiting', says: 'silence, probes, prompt check', act: (s) => s.wait.start() },
    'write-failed': writeFailed,
    output: { to: 'writing', says: 'collect, or match', act: (s, e) => void s.collectOrMatch(e.chunk) },
    matched,
    cancel: { to: 'interrupting', says: 'the write lands first', act: (s) => s.interrupt(true) },
    timeout: timedOut,
    exit: exited,
  },
  waiting: {
    output: {
      to: 'waiting',
      says: "collect, or match; else burst probe; startup's first output starts probes and silence",
      act: (s, e) => {
        if (s.collectOrMatch(e.chunk)) return
        s.wait.startupOutput()
        s.wait.noteBurst(e.gapMs)
      },
    },
    matched,
    prompt: { to: 'waiting', says: 'trusted: drain; else probe now', act: (s) => s.wait.answerPrompt() },
    sample: judged('waiting'),
    drained,
    'drain-broken': probesAgain('waiting'),
    silence: {
      ...end(
        'inferred_idle',
        '`inferred_idle`, only when `silenceSettles`: the send settles on silence (not `settleOnSilence: false`, nor `waitFor` without `idleMs`) and readiness is unprovable (not a program proven not to read, unless `idleMs` or the alternate screen)',
      ),
      when: silenceSettles,
    },
    cancel: { to: 'interrupting', says: '', act: (s) => s.interrupt(false) },
    timeout: timedOut,
    exit: exited,
  },
  interrupting: {
    output: { to: 'interrupting', says: 'collect', act: (s, e) => s.collect(e.chunk) },
    'interrupt-ready': { to: 'interrupting', says: 'rebase on its sample; grace starts', act: (s, e) => s.rebaseForInterrupt(e.before) },
    signalled: probesAgain('cancelling'),
    'write-failed': writeFailed,
    cancel: { to: 'interrupting', says: 'accepted, nothing more' },
    grace: timedOut,
    timeout: timedOut,
    exit: exited,
  },
  cancelling: {
    output: {
      to: 'cancelling',
      says: 'collect; burst probe',
      act: (s, e) => {
        s.collect(e.chunk)
        s.wait.noteBurst(e.gapMs)
      },
    },
    prompt: { to: 'cancelling', says: 'probe now', act: (s) => s.wait.probeNow() },
    sample: judged('cancelling'),
    drained,
    'drain-broken': probesAgain('cancelling'),
    'write-failed': writeFailed,
    cancel: { to: 'cancelling', says: 'accepted, nothing more' },
    grace: timedOut,
    timeout: timedOut,
    exit: exited,
  },
  describing: {
    output: { to: 'describing', says: 'collect (after a match on a completed line: for the next send)', act: (s, e) => s.collect(e.chunk) },
    described: { to: 'settled', says: 'the decided reason, with the state', act: (s, e) => s.finish(s.decided ?? UNDECIDED, e.input) },
    exit: { to: 'settled', says: 'the decided reason, no state', act: (s) => s.finish(s.decided ?? UNDECIDED) },
  },
  settled: {},
}

/** What entering a phase does, before the step of the transition that entered it (only on a change of phase). */
export interface PhaseEntry {
  /** In a few words, for the readiness note's table. */
  readonly says: string
  readonly act: (steps: SendSteps) => void
}

/** The enter actions: a rule about a whole phase lives here once, not in each transition into it. */
export const PHASE_ENTRY: { readonly [P in SendPhase]?: PhaseEntry } = {
  interrupting: { says: 'probes pause; drain and silence stop', act: (s) => s.wait.hold() },
  describing: { says: 'probes and every timer but the describe bound stop', act: (s) => s.stopEvidence() },
}

/** Each event's row label in the readiness note's table (in the table's order): what it is, briefly. */
export const SEND_EVENT_NOTES: { readonly [K in SendEvent['kind']]: string } = {
  inspected: 'pre-write sample',
  'no-input': 'empty send, startup',
  written: '',
  'write-failed': 'shell alive',
  output: '',
  matched: 'reported by the `output` step',
  prompt: '',
  sample: '',
  drained: '',
  'drain-broken': '',
  silence: '',
  'interrupt-ready': '',
  signalled: '',
  grace: '',
  timeout: '',
  exit: '',
  cancel: '',
  described: 'the state, or none past the bound',
}

/**
 * The table as the readiness note shows it: one row per event, one column per phase but `settled`
 * (which ignores everything); a cell names the phase it moves to (when another) and what it does.
 */
export function renderSendTable(): string {
  const phases = (Object.keys(SEND_TRANSITIONS) as SendPhase[]).filter((phase) => phase !== 'settled')
  const rows = [`| event | ${phases.join(' | ')} |`, `|---|${phases.map(() => '---|').join('')}`]
  rows.push(`| (on entering) | ${phases.map((phase) => PHASE_ENTRY[phase]?.says ?? '').join(' | ')} |`)
  for (const [kind, note] of Object.entries(SEND_EVENT_NOTES)) {
    const cells = phases.map((phase) => {
      const transition = SEND_TRANSITIONS[phase][kind as SendEvent['kind']] as Transition | undefined
      if (!transition) return ''
      const move = transition.to === phase ? '' : `→ ${transition.to}`
      return move && transition.says ? `${move}: ${transition.says}` : move || transition.says
    })
    rows.push(`| \`${kind}\`${note ? ` (${note})` : ''} | ${cells.join(' | ')} |`)
  }
  return rows.join('\n')
}

/** The transition `phase` makes on `event` given the send's `facts`, or `undefined` when the phase ignores it. */
export function transitionFor(phase: SendPhase, event: SendEvent, facts: SendFacts): Transition | undefined {
  const transition = SEND_TRANSITIONS[phase][event.kind] as Transition | undefined
  return transition?.when && !transition.when(facts) ? undefined : transition
}
