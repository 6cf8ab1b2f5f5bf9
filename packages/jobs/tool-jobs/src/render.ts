import type { JobInfo, JobRead } from 'dsh-jobs'
import { fitTailAndTrailer, keepUtf8Head, oneLine, utf8ByteLength } from 'dsh-basics'
import { type OutputShape, shapeOutput } from 'dsh-tools'
import type { JobOutputMatch, JobWaitOutcome } from './wait'

/** Text of `job_output` when nothing arrived since the previous read. */
export const NO_NEW_OUTPUT = '(no new output)'

/** Text of `job_list` for an agent without jobs. */
export const NO_JOBS = '(no jobs)'

/** Bytes of a label shown on one `job_list` line. */
const MAX_LABEL_BYTES = 120

/** Bytes of the matched line shown in `[match: …]`; the whole line is in `meta.match`. */
export const MAX_MATCH_LINE_BYTES = 200

/** How a `job_output` wait went, for the lines that say so: its outcome, bound and pattern's match. */
export interface WaitReport {
  waited: JobWaitOutcome
  /** The bound the wait had, in ms. */
  timeoutMs: number
  /** Whether the call gave `waitFor` (a wait that ended without a match then says so). */
  waitFor: boolean
  match?: JobOutputMatch
}

/**
 * The lines that say why a wait ended: `[waited: match]` and `[match: <line>]`;
 * `[waited: finished]`; `[waited: timeout after 30000 ms]`; `[waited: cancelled]`. With `waitFor`,
 * an end without a match adds `, no match` (`[waited: finished, no match]`).
 */
export function waitLines(report: WaitReport): string[] {
  if (report.waited === 'match' && report.match) return ['[waited: match]', `[match: ${clipped(report.match.line, MAX_MATCH_LINE_BYTES)}]`]
  const how = report.waited === 'timeout' ? `timeout after ${report.timeoutMs} ms` : report.waited
  return [`[waited: ${how}${report.waitFor ? ', no match' : ''}]`]
}

/** `[status: <status>, <detail>]`, the last line of every `job_output` result. */
export function statusLine(job: JobInfo): string {
  return `[status: ${job.status}, ${oneLine(job.detail)}]`
}

/** The shape of no new output: the placeholder is not output. */
const NO_OUTPUT: OutputShape = { text: '', lines: 0, bytes: 0, shownBytes: 0, omittedLines: 0, omittedBytes: 0, foldedLines: 0, truncated: false }

/** How a `job_output` result is sized: its window in bytes and whether repeated lines fold. */
export interface OutputWindow {
  /** UTF-8 bytes of the whole result (the call's `maxBytes`, else the configured default). */
  maxBytes: number
  foldRepeats: boolean
}

/** A rendered `job_output`: its text, whether it lost bytes, and the shape of the output in it. */
export interface RenderedOutput {
  text: string
  truncated: boolean
  /** The new output as shaped (all zeros when there was none). */
  output: OutputShape
}

/**
 * `<new output or "(no new output)">\n[status: …]`, with the {@link waitLines} of a reported wait
 * before the status line, within the smaller of the window and the job's `outputLimitBytes`. The
 * output folds repeated lines and, when too long, keeps its head and tail around one line that says
 * what was left out; the status lines always survive. One trailing newline of the output is dropped
 * so the next line follows the last output line directly.
 */
export function renderOutput(read: JobRead, wait: WaitReport | undefined, window: OutputWindow): RenderedOutput {
  const lines = [...(wait ? waitLines(wait) : []), statusLine(read.job)]
  const trailer = `\n${lines.join('\n')}`
  const limit = Math.min(window.maxBytes, read.job.outputLimitBytes)
  if (!read.output) {
    const fitted = fitTailAndTrailer(NO_NEW_OUTPUT, trailer, limit)
    return { text: fitted.text, truncated: read.truncated || fitted.truncated, output: NO_OUTPUT }
  }
  const body = read.output.replace(/\r?\n$/, '') || read.output
  const room = limit - utf8ByteLength(trailer)
  if (room <= 0) {
    const fitted = fitTailAndTrailer(body, trailer, limit)
    return { text: fitted.text, truncated: true, output: shapeOutput(body, { maxBytes: 0, foldRepeats: window.foldRepeats }) }
  }
  const output = shapeOutput(body, { maxBytes: room, foldRepeats: window.foldRepeats })
  return { text: output.text + trailer, truncated: read.truncated || output.truncated, output }
}

/** `job_kill`'s answer: the request, or that the job had already stopped. */
export function renderKill(before: JobInfo, after: JobInfo): string {
  if (before.status !== 'running') return `job ${after.id} has already finished ${statusLine(after)}`
  return `requested cancellation of job ${after.id}`
}

/** One line per job, `<id> [<status>, <detail>] <label>`, or `(no jobs)`. */
export function renderList(jobs: readonly JobInfo[]): string {
  if (!jobs.length) return NO_JOBS
  return jobs.map((job) => `${job.id} [${job.status}, ${oneLine(job.detail)}] ${label(job.label)}`.trimEnd()).join('\n')
}

function label(text: string): string {
  return clipped(text, MAX_LABEL_BYTES)
}

/** `text` on one line, at most `maxBytes` UTF-8 bytes: cut on a code-point boundary, marked with `…`. */
function clipped(text: string, maxBytes: number): string {
  const line = oneLine(text)
  if (utf8ByteLength(line) <= maxBytes) return line
  return `${keepUtf8Head(line, maxBytes - 3)}…`
}
