import type { Context } from '@deepseek-ai/cordis'
import type { Agent } from 'dsh-agent'
import { defineTool, fitTail, textContent, type Tool, type ToolContent } from 'dsh-tools'
import { z } from 'zod'
import type { ToolJobsConfig } from './config'
import { renderKill, renderList, renderOutput } from './render'

/** The reason `job_kill` gives the registry; it becomes the killed job's status detail. */
export const KILL_REASON = 'cancelled by job_kill'

/** The system-prompt section of the job tools. */
export const JOBS_GUIDANCE = {
  id: 'jobs',
  title: 'Background jobs',
  text: [
    'Some tools can run work in the background and return a job id such as pty-send-1.',
    'Read its new output and status with job_output (wait: true blocks until it finishes, up to a bound);',
    'cancel it with job_kill; see your jobs with job_list. Output nobody reads is bounded: its oldest part is dropped.',
  ].join(' '),
  order: 110,
}

const jobId = z.string().min(1).describe('Id of a job you started, e.g. pty-send-1')

/** Build `job_output`, `job_kill` and `job_list` over `ctx.jobs`, capped at `maxResultBytes`. */
export function jobTools(ctx: Context, config: ToolJobsConfig): Tool[] {
  const finalizeContent = (content: ToolContent[]) => capped(content, config.maxResultBytes)

  const jobOutput = defineTool({
    name: 'job_output',
    description:
      'Read the new output of a background job since your previous read, followed by its status line. ' +
      'Set wait to true to block until the job finishes (bounded); the result then holds its final output.',
    kind: 'read',
    parameters: z.strictObject({
      jobId,
      wait: z.boolean().optional().describe('Wait until the job finishes before reading (bounded by the host)'),
    }),
    present: (args) => ({ title: `output of job ${args.jobId}` }),
    finalizeContent,
    execute: async (args, call) => {
      if (args.wait) await waitBounded(ctx, args.jobId, call.agent, call.signal, config.maxWaitMs)
      const read = ctx.jobs.read(args.jobId, call.agent)
      const rendered = renderOutput(read)
      return {
        content: [textContent(rendered.text)],
        meta: { jobId: read.job.id, status: read.job.status, truncated: rendered.truncated },
      }
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

/** Wait for the job to stop running, at most `maxWaitMs`, returning early when the call is cancelled. */
async function waitBounded(ctx: Context, id: string, agent: Agent, signal: AbortSignal, maxWaitMs: number): Promise<void> {
  if (maxWaitMs === 0) return
  const controller = new AbortController()
  const stop = () => controller.abort()
  const timer = setTimeout(stop, maxWaitMs)
  if (signal.aborted) stop()
  else signal.addEventListener('abort', stop, { once: true })
  try {
    await ctx.jobs.wait(id, agent, controller.signal)
  } finally {
    clearTimeout(timer)
    signal.removeEventListener('abort', stop)
  }
}

/** Join the text and keep its tail within the cap, so an error or a status line always survives. */
function capped(content: ToolContent[], maxBytes: number): ToolContent[] {
  return [textContent(fitTail(content.map((block) => block.text).join('\n'), '', maxBytes).text)]
}
