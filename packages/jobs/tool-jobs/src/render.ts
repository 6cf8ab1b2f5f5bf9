import type { JobInfo, JobRead } from 'dsh-jobs'
import { fitTail, truncateUtf8Head, utf8ByteLength } from 'dsh-tools'
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

/**
 * `<new output or "(no new output)">\n[status: …]`, with the {@link waitLines} of a reported wait
 * before the status line, bounded to the job's `outputLimitBytes`: the output's tail and the whole
 * status line survive. One trailing newline of the output is dropped so the next line follows the
 * last output line directly.
 */
export function renderOutput(read: JobRead, wait?: WaitReport): { text: string; truncated: boolean } {
  const body = read.output ? read.output.replace(/\r?\n$/, '') || read.output : NO_NEW_OUTPUT
  const lines = [...(wait ? waitLines(wait) : []), statusLine(read.job)]
  const fitted = fitTail(body, `\n${lines.join('\n')}`, read.job.outputLimitBytes)
  return { text: fitted.text, truncated: read.truncated || fitted.truncated }
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

/** Collapse whitespace and control characters so a value cannot break the line format. */
export function oneLine(text: string): string {
  return text
    .replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ')
    .replace(/ {2,}/g, ' ')
    .trim()
}

function label(text: string): string {
  return clipped(text, MAX_LABEL_BYTES)
}

/** `text` on one line, at most `maxBytes` UTF-8 bytes: cut on a code-point boundary, marked with `…`. */
function clipped(text: string, maxBytes: number): string {
  const line = oneLine(text)
  if (utf8ByteLength(line) <= maxBytes) return line
  return `${truncateUtf8Head(line, maxBytes - 3)}…`
}
