import type { JobInfo, JobRead } from 'dsh-jobs'
import { fitTail, truncateUtf8Head, utf8ByteLength } from 'dsh-tools'

/** Text of `job_output` when nothing arrived since the previous read. */
export const NO_NEW_OUTPUT = '(no new output)'

/** Text of `job_list` for an agent without jobs. */
export const NO_JOBS = '(no jobs)'

/** Bytes of a label shown on one `job_list` line. */
const MAX_LABEL_BYTES = 120

/** `[status: <status>, <detail>]`, the last line of every `job_output` result. */
export function statusLine(job: JobInfo): string {
  return `[status: ${job.status}, ${oneLine(job.detail)}]`
}

/**
 * `<new output or "(no new output)">\n[status: …]`, bounded to the job's `outputLimitBytes`:
 * the output's tail and the whole status line survive. One trailing newline of the output is
 * dropped so the status line follows the last output line directly.
 */
export function renderOutput(read: JobRead): { text: string; truncated: boolean } {
  const body = read.output ? read.output.replace(/\r?\n$/, '') || read.output : NO_NEW_OUTPUT
  const fitted = fitTail(body, `\n${statusLine(read.job)}`, read.job.outputLimitBytes)
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
  const line = oneLine(text)
  if (utf8ByteLength(line) <= MAX_LABEL_BYTES) return line
  return `${truncateUtf8Head(line, MAX_LABEL_BYTES - 3)}…`
}
