import type { ForegroundFacts } from 'dsh-subprocess'
import { describe, expect, it } from 'vitest'
import { type EvidenceRules, ReadinessEvidence } from '../src/readiness/evidence'
import { childBlocked, childWaiting, FakeTerminal, shellRunning, shellWaiting, type FakeForeground } from './support/fake-terminal'

const fake = new FakeTerminal()
let sequence = 0
function facts(fg: FakeForeground, options: { noExactTier?: boolean } = {}): ForegroundFacts {
  fake.foreground = fg
  fake.noExactTier = options.noExactTier ?? false
  return fake.facts(++sequence) as ForegroundFacts
}

/** The same facts with every wait called with a `timeoutMs` timeout. */
function timed(f: ForegroundFacts | undefined, timeoutMs: number): ForegroundFacts {
  const waits = f!.waits.map((wait) => ({ ...wait, timeoutMs }))
  return { ...f!, waits }
}

function evidence(before: ForegroundFacts | undefined, rules: Partial<EvidenceRules> = {}): ReadinessEvidence {
  return new ReadinessEvidence({ before, requireNewWait: true, stillMs: 50, ...rules })
}

/** What `judge` answers. */
const NONE = { kind: 'none' }
const PROMPT = { kind: 'proof', proof: 'prompt' }
const STDIN = { kind: 'proof', proof: 'stdin' }
const followUp = (delayMs: number) => ({ kind: 'follow-up', delayMs })

const quiet = (arrivals = 3, lineHasText = true) => ({ promptReady: false, arrivals, lineHasText })
const sample = (f: ForegroundFacts | undefined, startedAt = 0, arrivalsAtStart = 3) => ({ facts: f, startedAt, arrivalsAtStart })

const atPrompt = (arrivals = 3) => ({ promptReady: true, arrivals, lineHasText: true })

describe('readiness evidence: prompt tier (A)', () => {
  it('with nothing written, counts the prompt at once with the shell in front and blocked reading', () => {
    const e = evidence(undefined, { requireNewWait: false })
    expect(e.judge(sample(facts(shellWaiting())), atPrompt())).toEqual(PROMPT)
    expect(e.judge(sample(facts(childBlocked())), atPrompt())).toEqual(NONE)
  })

  it('after a write, counts the prompt once the shell’s wait held still for stillMs', () => {
    const e = evidence(undefined, { stillMs: 50 })
    expect(e.judge(sample(facts(shellWaiting(30)), 0), atPrompt())).toEqual(followUp(50))
    // The follow-up lands exactly when the hold can be complete.
    expect(e.judge(sample(facts(shellWaiting(30)), 20), atPrompt())).toEqual(followUp(30))
    expect(e.judge(sample(facts(shellWaiting(30)), 50), atPrompt())).toEqual(PROMPT)
    expect(e.judge(sample(facts(childBlocked())), atPrompt())).toEqual(NONE)
  })

  it('an owed prompt whose shell then wakes (it reads our input) restarts the hold', () => {
    const e = evidence(undefined, { stillMs: 50 })
    expect(e.judge(sample(facts(shellWaiting(30)), 0), atPrompt())).toEqual(followUp(50))
    // Same output, but the waiting thread ran: it is no longer the same wait.
    expect(e.judge(sample(facts(shellWaiting(31)), 50), atPrompt())).toEqual(followUp(50))
    expect(e.judge(sample(facts(shellWaiting(31)), 99), atPrompt())).toEqual(followUp(1))
    expect(e.judge(sample(facts(shellWaiting(31)), 100), atPrompt())).toEqual(PROMPT)
  })

  it('waits for the shell to block, and falls back after pollInterval of stillness if it never provably does', () => {
    const e = evidence(undefined, { requireNewWait: false, stillMs: 50 })
    // It usually blocks a moment after printing the prompt: look again at once, then on the backoff.
    expect(e.judge(sample(facts(shellRunning()), 0), atPrompt())).toEqual(followUp(1))
    expect(e.judge(sample(facts(shellRunning()), 20), atPrompt())).toEqual(NONE)
    expect(e.judge(sample(facts(shellRunning()), 50), atPrompt())).toEqual(PROMPT)
    const blocks = evidence(undefined, { requireNewWait: false, stillMs: 50 })
    expect(blocks.judge(sample(facts(shellRunning()), 0), atPrompt())).toEqual(followUp(1))
    expect(blocks.judge(sample(facts(shellWaiting()), 1), atPrompt())).toEqual(PROMPT)
  })

  it('restarts the fallback clock when output arrived in between', () => {
    const e = evidence(undefined, { stillMs: 50 })
    e.judge(sample(facts(shellRunning()), 0, 3), atPrompt(3))
    expect(e.judge(sample(facts(shellRunning()), 60, 4), atPrompt(4))).toEqual(followUp(1))
    expect(e.judge(sample(facts(shellRunning()), 110, 4), atPrompt(4))).toEqual(PROMPT)
  })

  it('without an exact tier (macOS) the shell in front is enough at startup, and held still otherwise', () => {
    const unproven = () => facts(shellRunning(), { noExactTier: true })
    expect(evidence(undefined, { requireNewWait: false, nothingTyped: true }).judge(sample(unproven()), atPrompt())).toEqual(PROMPT)
    // A send that only waits may meet a prompt owed from earlier input, as a send that writes may.
    const waitOnly = evidence(undefined, { requireNewWait: false, stillMs: 50 })
    expect(waitOnly.judge(sample(unproven(), 0), atPrompt())).toEqual(followUp(50))
    expect(waitOnly.judge(sample(unproven(), 50), atPrompt())).toEqual(PROMPT)
    const e = evidence(undefined, { stillMs: 50 })
    expect(e.judge(sample(facts(shellRunning(), { noExactTier: true }), 0), atPrompt())).toEqual(followUp(50))
    expect(e.judge(sample(facts(shellRunning(), { noExactTier: true }), 50), atPrompt())).toEqual(PROMPT)
  })
})

describe('readiness evidence: stdin tier (B)', () => {
  it('a new foreground group waiting for input is proof at once', () => {
    const before = facts(shellWaiting(10))
    expect(evidence(before).judge(sample(facts(childWaiting())), quiet())).toEqual(STDIN)
  })

  it('with nothing on the cursor’s line a wait must hold still for stillMs; an epoll wait never counts', () => {
    const before = facts(shellWaiting(10))
    // bc after `42`, or a program whose prompt is still in flight: hold still, no output.
    const e = evidence(before, { stillMs: 50 })
    expect(e.judge(sample(facts(childWaiting(5000, 3)), 0), quiet(3, false))).toEqual(followUp(1))
    expect(e.judge(sample(facts(childWaiting(5000, 3)), 20), quiet(3, false))).toEqual(followUp(30))
    expect(e.judge(sample(facts(childWaiting(5000, 3)), 50), quiet(3, false))).toEqual(STDIN)
    // The same for the shell's own group (a silent `read -s`).
    const shell = evidence(before, { stillMs: 50 })
    expect(shell.judge(sample(facts(shellWaiting(11)), 0), quiet(3, false))).toEqual(followUp(1))
    expect(shell.judge(sample(facts(shellWaiting(11)), 49), quiet(3, false))).toEqual(followUp(1))
    expect(shell.judge(sample(facts(shellWaiting(11)), 50), quiet(3, false))).toEqual(STDIN)
    // node exiting after `.exit`: epoll still lists stdin, nothing is on the line.
    const loop = childWaiting()
    loop.threads[0]!.syscallName = 'epoll_wait'
    const exiting = evidence(before, { stillMs: 50 })
    expect(exiting.judge(sample(facts(loop), 0), quiet(3, false))).toEqual(NONE)
    expect(exiting.judge(sample(facts(loop), 500), quiet(3, false))).toEqual(NONE)
    expect(evidence(before).judge(sample(facts(loop)), quiet(3, true))).toEqual(STDIN)
    // On the alternate screen a full-screen program on an event loop waits for keys so: it counts once held.
    const drawn = { ...quiet(3, false), alternateScreen: true }
    const tui = evidence(before, { stillMs: 50 })
    expect(tui.judge(sample(facts(loop), 0), drawn)).toEqual(followUp(1))
    expect(tui.judge(sample(facts(loop), 50), drawn)).toEqual(STDIN)
  })

  it('output arriving while a silent wait holds still restarts the clock', () => {
    const e = evidence(facts(shellWaiting(10)), { stillMs: 50 })
    expect(e.judge(sample(facts(childWaiting(5000, 3)), 0, 3), quiet(3, false))).toEqual(followUp(1))
    expect(e.judge(sample(facts(childWaiting(5000, 3)), 60, 4), quiet(4, false))).toEqual(followUp(1))
    expect(e.judge(sample(facts(childWaiting(5000, 3)), 110, 4), quiet(4, false))).toEqual(STDIN)
  })

  it('a wait that already existed before the write is not proof', () => {
    const before = facts(childWaiting(5000, 7))
    const e = evidence(before)
    expect(e.judge(sample(facts(childWaiting(5000, 7))), quiet())).toEqual(NONE)
    expect(e.judge(sample(facts(childWaiting(5000, 8))), quiet())).toEqual(STDIN)
  })

  it('the shell group without a prompt needs the same wait twice with nothing in between', () => {
    const before = facts(shellWaiting(10))
    const e = evidence(before)
    expect(e.judge(sample(facts(shellWaiting(11)), 0, 3), quiet(3))).toEqual(followUp(1))
    // It ran again (readline consuming more input): the candidate moves on.
    expect(e.judge(sample(facts(shellWaiting(12)), 1, 3), quiet(3))).toEqual(followUp(1))
    // Output arrived between two otherwise identical samples: still no proof.
    expect(e.judge(sample(facts(shellWaiting(12)), 2, 4), quiet(4))).toEqual(followUp(1))
    expect(e.judge(sample(facts(shellWaiting(12)), 3, 4), quiet(4))).toEqual(STDIN)
  })

  it('a brief timed wait (vim at exit, waiting 100 ms for a terminal reply) counts only once the program outlived it', () => {
    const before = facts(shellWaiting(10))
    const e = evidence(before)
    // Text on the line would count a wait at once; a brief one must first be seen again past its timeout.
    expect(e.judge(sample(timed(facts(childWaiting(5000, 3)), 100), 0), quiet())).toEqual(followUp(100))
    expect(e.judge(sample(timed(facts(childWaiting(5000, 4)), 100), 40), quiet())).toEqual(followUp(60))
    // Woken by its timeout and waiting again (a program polling for keys): it outlived the wait.
    expect(e.judge(sample(timed(facts(childWaiting(5000, 5)), 100), 100), quiet())).toEqual(STDIN)
    // Caught redrawing in between (not waiting) does not restart the clock: it is still there.
    const redraws = evidence(before)
    expect(redraws.judge(sample(timed(facts(childWaiting(5000, 3)), 100), 0), quiet())).toEqual(followUp(100))
    expect(redraws.judge(sample(facts(childBlocked(5000)), 60), quiet())).toEqual(NONE)
    expect(redraws.judge(sample(timed(facts(childWaiting(5000, 6)), 100), 110), quiet())).toEqual(STDIN)
    // The program left instead (vim exited): the shell's prompt decides, not the brief wait.
    const left = evidence(before)
    expect(left.judge(sample(timed(facts(childWaiting(5000, 3)), 100), 0), quiet())).toEqual(followUp(100))
    expect(left.judge(sample(facts(childBlocked(5000)), 100), quiet())).toEqual(NONE)
    expect(left.judge(sample(timed(facts(childWaiting(6000, 3)), 100), 120), quiet())).toEqual(followUp(100))
  })

  it('a timed wait that refreshes a screen (top, htop: a second or more) counts like any other', () => {
    const before = facts(shellWaiting(10))
    expect(evidence(before).judge(sample(timed(facts(childWaiting()), 1500)), quiet())).toEqual(STDIN)
    // One brief wait beside a long one is not a pause: the long one waits for a person.
    const untimed = { ...facts(childWaiting()).waits[0]!, tid: 5001 }
    const mixed = timed(facts(childWaiting()), 100)
    expect(evidence(before).judge(sample({ ...mixed, waits: [...mixed.waits, untimed] }), quiet())).toEqual(STDIN)
  })

  it('a sample voided by output that arrived while it ran proves nothing', () => {
    const e = evidence(facts(shellWaiting()))
    expect(e.judge(sample(facts(childWaiting()), 0, 3), quiet(4))).toEqual(NONE)
  })

  it('a sample taken before the baseline proves nothing (stale after a rebase)', () => {
    const stale = facts(childWaiting(6000))
    const e = evidence(facts(shellWaiting()))
    expect(e.judge(sample(stale), quiet())).toEqual(NONE)
  })

  it('without input written any proven wait counts, but startup needs output first', () => {
    const e = evidence(undefined, { requireNewWait: false, outputAfter: 0 })
    expect(e.judge(sample(facts(childWaiting()), 0, 0), quiet(0))).toEqual(NONE)
    expect(e.judge(sample(facts(childWaiting()), 0, 1), quiet(1))).toEqual(STDIN)
  })

  it('nothing is proven where the platform cannot prove waits, or with no group', () => {
    const e = evidence(facts(shellWaiting()))
    expect(e.judge(sample(facts(childWaiting(), { noExactTier: true })), quiet())).toEqual(NONE)
    expect(e.judge(sample(undefined), quiet())).toEqual(NONE)
  })
})
