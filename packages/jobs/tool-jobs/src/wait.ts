import type { Context } from '@deepseek-ai/cordis'
import type { Agent } from 'dsh-agent'
import type { JobInfo, JobRead } from 'dsh-jobs'
import { keepUtf8Tail, type LinePattern, utf8ByteLength } from 'dsh-basics'

/**
 * How often a `waitFor` wait pulls the job's output. Jobs such as a terminal send hand out output
 * only when read (`readOutput`), so a match can only be seen by reading; this is its latency.
 */
export const OUTPUT_POLL_MS = 100

/** Bytes of an unfinished line kept for matching: a line that never ends cannot grow without bound. */
export const MAX_PARTIAL_LINE_BYTES = 65_536

/**
 * Why a `job_output` wait ended: `match` (a new line matched `waitFor`), `finished` (the job
 * stopped running), `timeout` (the bound passed, the job still runs), `cancelled` (the tool call was).
 */
export type JobWaitOutcome = 'match' | 'finished' | 'timeout' | 'cancelled'

/** What `waitFor` matched in a job's new output: the matched text and the line holding it. */
export interface JobOutputMatch {
  /** The text the pattern matched. */
  text: string
  /** The line holding the match, without its line break (as far as it had arrived). */
  line: string
}

/** A finished wait: the output it took (one read's worth, bounded), why it ended, and the match. */
export interface JobWaitResult {
  read: JobRead
  waited: JobWaitOutcome
  match?: JobOutputMatch
}

/**
 * Tests output against a pattern line by line as it arrives, in pieces: each completed line, and
 * the line still in progress as far as it got (so a prompt without a newline can match too). The
 * pattern is a `LinePattern`: linear-time on a bounded tail of each line, so no line stalls the host.
 */
export class LineMatcher {
  #partial = ''

  constructor(readonly pattern: LinePattern) {}

  /** Feed the next piece of output; the first line in it that matches, if any. */
  feed(text: string): JobOutputMatch | undefined {
    if (!text) return undefined
    const lines = (this.#partial + text).split('\n')
    const last = lines.at(-1) ?? ''
    this.#partial = utf8ByteLength(last) > MAX_PARTIAL_LINE_BYTES ? keepUtf8Tail(last, MAX_PARTIAL_LINE_BYTES) : last
    for (const raw of lines) {
      const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw
      const text = this.pattern.firstMatch(line)
      if (text !== undefined) return { text, line }
    }
    return undefined
  }
}

/**
 * Wait until the job stops running, at most `timeoutMs` (none when 0), returning early when the call
 * is cancelled; then read its output. Says which of the three ended the wait.
 */
export async function waitThenRead(ctx: Context, id: string, agent: Agent, signal: AbortSignal, timeoutMs: number): Promise<JobWaitResult> {
  if (timeoutMs > 0) await ctx.jobs.wait(id, agent, AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]))
  const read = ctx.jobs.read(id, agent)
  return { read, waited: outcomeOf(read.job, signal) }
}

/**
 * Read the job's output until a line of it matches `pattern`, the job stops running, `timeoutMs`
 * passed or the call is cancelled. Only output after the previous read is tested (every read takes
 * what it returns); all of it is returned as one read, bounded to the job's `outputLimitBytes`
 * (tail kept, `truncated` set when bytes were lost).
 */
export async function waitForMatch(
  ctx: Context,
  id: string,
  agent: Agent,
  signal: AbortSignal,
  pattern: LinePattern,
  timeoutMs: number,
): Promise<JobWaitResult> {
  const matcher = new LineMatcher(pattern)
  const deadline = AbortSignal.timeout(timeoutMs)
  const stop = AbortSignal.any([signal, deadline])
  let output = ''
  let truncated = false
  let ended: Promise<unknown> | undefined
  for (;;) {
    const read = ctx.jobs.read(id, agent)
    if (read.truncated) truncated = true
    if (read.output) {
      output += read.output
      const limit = read.job.outputLimitBytes
      if (utf8ByteLength(output) > limit) {
        output = keepUtf8Tail(output, limit)
        truncated = true
      }
    }
    const match = matcher.feed(read.output)
    const collected: JobRead = { job: read.job, output, truncated }
    if (match) return { read: collected, waited: 'match', match }
    if (read.job.status !== 'running' || stop.aborted) return { read: collected, waited: outcomeOf(read.job, signal) }
    // One wait for the job's end serves every round; it also resolves when the call stops.
    ended ??= ctx.jobs.wait(id, agent, stop).catch(() => undefined)
    await Promise.race([ended, pause(OUTPUT_POLL_MS)])
  }
}

/** `finished` once the job stopped, else `cancelled` when the call was, else `timeout`. */
function outcomeOf(job: JobInfo, signal: AbortSignal): JobWaitOutcome {
  if (job.status !== 'running') return 'finished'
  return signal.aborted ? 'cancelled' : 'timeout'
}

/** Resolve after `ms`. The timer is unreferenced: a pending poll never keeps the process alive. */
function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref())
}
