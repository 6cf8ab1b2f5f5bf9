import type { Context } from '@deepseek-ai/cordis'
import type { z } from 'zod'
import { Config } from './config'
import { JOBS_GUIDANCE, jobTools } from './tools'

export { Config, type ToolJobsConfig } from './config'
export {
  MAX_MATCH_LINE_BYTES,
  NO_JOBS,
  NO_NEW_OUTPUT,
  renderKill,
  renderList,
  renderOutput,
  statusLine,
  type WaitReport,
  waitLines,
} from './render'
export { JOBS_GUIDANCE, jobTools, KILL_REASON } from './tools'
export {
  type JobOutputMatch,
  type JobWaitOutcome,
  type JobWaitResult,
  LineMatcher,
  MAX_PARTIAL_LINE_BYTES,
  OUTPUT_POLL_MS,
  waitForMatch,
  waitThenRead,
} from './wait'

/** Plugin name used in a cordis.yml. */
export const name = 'dsh-tool-jobs'

/** Needs the tool registry to register on and the job registry to read. */
export const inject = ['tools', 'jobs']

/** Register `job_output`, `job_kill`, `job_list` and their guidance; all vanish when this plugin unloads. */
export function apply(ctx: Context, config: z.input<typeof Config>): void {
  for (const tool of jobTools(ctx, Config.parse(config))) ctx.tools.register(tool)
  ctx.tools.registerGuidance(JOBS_GUIDANCE)
}
