import type { Context } from '@deepseek-ai/cordis'
import { fitTailAndTrailer, LinePattern } from 'dsh-basics'
import { defineTool, type OutputShape, regexSourceParam, textContent, type Tool, type ToolContent } from 'dsh-tools'
import { z } from 'zod'
import type { ToolJobsConfig } from './config'
import { renderKill, renderList, renderOutput } from './render'
import { type JobWaitResult, waitForMatch, waitThenRead } from './wait'

/** Smallest `maxBytes` a call may ask for: room for a status line. */
export const MIN_RESULT_BYTES = 64

/** The reason `job_kill` gives the registry; it becomes the killed job's status detail. */
export const KILL_REASON = 'cancelled by job_kill'

/** The system-prompt section of the job tools. */
export const JOBS_GUIDANCE = {
  id: 'jobs',
  title: 'Background jobs',
  text: [
    'Some tools can run work in the background and return a job id such as pty-send-1.',
    'Read its new output and status with job_output (wait: true blocks until it finishes, up to a bound;',
    "waitFor, a regular expression, returns as soon as a new line matches, e.g. a server's ready line);",
    'cancel it with job_kill; see your jobs with job_list. Output nobody reads is bounded: its oldest part is dropped.',
  ].join(' '),
  order: 110,
}

const jobId = z.string().min(1).describe('Id of a job you started, e.g. pty-send-1')

/**
 * `waitFor`: a line pattern's source; one that is no regular expression is INVALID_ARGUMENTS naming
 * it, and `execute` compiles it (UNSUPPORTED_PATTERN for backreferences and lookaround).
 */
const waitFor = regexSourceParam('waitFor')
  .optional()
  .describe(
    'Wait until a line of output after your previous read matches this regular expression (source only, e.g. "ready|listening on"; "(?i)ready" ignores case), ' +
      'or the job ends, or the timeout passes. Implies wait. RE2 syntax: no backreferences (\\1) or lookaround ((?=…), (?<=…)).',
  )

/** Parameters of job_output: `timeoutMs` is bounded by `maxWaitMs`, `maxBytes` by `maxResultBytes`. */
function outputParameters(config: ToolJobsConfig) {
  const { maxWaitMs, maxResultBytes, defaultMaxBytes } = config
  return z
    .strictObject({
      jobId,
      wait: z.boolean().optional().describe('Wait until the job finishes before reading (bounded by the host)'),
      waitFor,
      timeoutMs: z
        .number()
        .int('timeoutMs must be an integer number of milliseconds')
        .min(1, 'timeoutMs must be at least 1 ms')
        .max(maxWaitMs, `timeoutMs must be at most ${maxWaitMs} ms (maxWaitMs of dsh-tool-jobs)`)
        .optional()
        .describe(`Longest this call waits, in ms (1 to ${maxWaitMs}, the default). Implies wait.`),
      maxBytes: z
        .number()
        .int('maxBytes must be an integer number of bytes')
        .min(MIN_RESULT_BYTES, `maxBytes must be at least ${MIN_RESULT_BYTES} bytes`)
        .max(maxResultBytes, `maxBytes must be at most ${maxResultBytes} bytes (maxResultBytes of dsh-tool-jobs)`)
        .optional()
        .describe(
          `UTF-8 bytes this result may take (${MIN_RESULT_BYTES} to ${maxResultBytes}; default ${defaultMaxBytes}). ` +
            'Longer output keeps its head and tail; the line between them says what was left out.',
        ),
    })
    .superRefine((args, issues) => {
      if (args.wait !== false) return
      for (const key of ['waitFor', 'timeoutMs'] as const) {
        if (args[key] !== undefined) issues.addIssue({ code: 'custom', path: [key], message: `${key} applies to a wait; drop wait: false` })
      }
    })
}

/** Build `job_output`, `job_kill` and `job_list` over `ctx.jobs`, capped at `maxResultBytes`. */
export function jobTools(ctx: Context, config: ToolJobsConfig): Tool[] {
  const finalizeContent = (content: ToolContent[]) => capped(content, config.maxResultBytes)

  const jobOutput = defineTool({
    name: 'job_output',
    description:
      'Read the new output of a background job since your previous read, followed by its status line. ' +
      'Set wait to true to block until the job finishes (bounded); the result then holds its final output. ' +
      'waitFor (a regex) returns as soon as a new line matches instead, e.g. a server ready line; [waited: …] then says why the wait ended.',
    kind: 'read',
    parameters: outputParameters(config),
    present: (args) => ({ title: `output of job ${args.jobId}` }),
    finalizeContent,
    execute: async (args, call) => {
      // The new parameters report how the wait went; a plain wait: true answers as it always did.
      const reported = args.waitFor !== undefined || args.timeoutMs !== undefined
      // Compiled before the wait: JavaScript-only syntax throws UNSUPPORTED_PATTERN, reported as it is.
      const pattern = args.waitFor === undefined ? undefined : LinePattern.compile(args.waitFor, 'waitFor')
      let waited: JobWaitResult | undefined
      if (args.wait || reported) {
        const timeoutMs = args.timeoutMs ?? config.maxWaitMs
        waited =
          pattern === undefined
            ? await waitThenRead(ctx, args.jobId, call.agent, call.signal, timeoutMs)
            : await waitForMatch(ctx, args.jobId, call.agent, call.signal, pattern, timeoutMs)
      }
      const read = waited?.read ?? ctx.jobs.read(args.jobId, call.agent)
      const report =
        waited && reported
          ? { waited: waited.waited, timeoutMs: args.timeoutMs ?? config.maxWaitMs, waitFor: args.waitFor !== undefined, match: waited.match }
          : undefined
      const rendered = renderOutput(read, report, { maxBytes: args.maxBytes ?? config.defaultMaxBytes, foldRepeats: config.foldRepeatedLines })
      const meta: Record<string, unknown> = { jobId: read.job.id, status: read.job.status, truncated: rendered.truncated }
      meta.output = outputSize(rendered.output)
      if (report) meta.waited = report.waited
      if (report?.match) meta.match = { ...report.match }
      return { content: [textContent(rendered.text)], meta }
    },
  })

  const jobKill = defineTool({
    name: 'job_kill',
    description: 'Cancel a background job you started. Check job_output afterwards to see it end.',
    kind: 'execute',
    parameters: z.strictObject({ jobId }),
    present: (args) => ({ title: `kill job ${args.jobId}` }),
    finalizeContent,
    execute: (args, call) => {
      const before = ctx.jobs.get(args.jobId, call.agent)
      const after = ctx.jobs.kill(args.jobId, call.agent, KILL_REASON)
      return {
        content: [textContent(renderKill(before ?? after, after))],
        meta: { jobId: after.id, status: after.status },
      }
    },
  })

  const jobList = defineTool({
    name: 'job_list',
    description: 'List your background jobs, one line each: id, status and label.',
    kind: 'read',
    parameters: z.strictObject({}),
    present: () => ({ title: 'list jobs' }),
    finalizeContent,
    execute: (_args, call) => {
      const jobs = ctx.jobs.list(call.agent)
      return { content: [textContent(renderList(jobs))], meta: { count: jobs.length } }
    },
  })

  return [jobOutput, jobKill, jobList]
}

/** The size of the shaped output for `meta`: bytes and lines in total, shown, folded and left out. */
function outputSize(shape: OutputShape): Record<string, number> {
  const { bytes, lines, shownBytes, foldedLines, omittedLines, omittedBytes } = shape
  return { bytes, lines, shownBytes, foldedLines, omittedLines, omittedBytes }
}

/** Join the text and keep its tail within the cap, so an error or a status line always survives. */
function capped(content: ToolContent[], maxBytes: number): ToolContent[] {
  return [textContent(fitTailAndTrailer(content.map((block) => block.text).join('\n'), '', maxBytes).text)]
}
