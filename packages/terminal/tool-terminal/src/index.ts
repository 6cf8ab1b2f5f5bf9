import type { Context } from '@deepseek-ai/cordis'
import type {} from 'dsh-jobs'
import type {} from 'dsh-terminal'
import type {} from 'dsh-tools'
import type { z } from 'zod'
import { BackgroundHolders } from './busy-sessions'
import { Config } from './config'
import { terminalGuidance } from './guidance'
import { closeTool } from './tools/close'
import { listTool } from './tools/list'
import { openTool } from './tools/open'
import { readTool } from './tools/read'
import type { ToolDeps } from './tools/shared'
import { sendTool } from './tools/send'
import { signalTool } from './tools/signal'

export { BACKGROUND_JOB_KIND, startBackgroundSend, type BackgroundSendOptions, type JobStarter } from './background'
export { BackgroundHolders, explainBusy } from './busy-sessions'
export {
  Config,
  DEFAULT_MAX_TIMEOUT_MS,
  DEFAULT_RESULT_BYTES,
  MAX_MAX_TIMEOUT_MS,
  MAX_RESULT_BYTES,
  MIN_RESULT_BYTES,
  type TerminalToolsConfig,
} from './config'
export { jobsUnavailable, noScreen, sendCancelled, terminalToolError, type TerminalToolErrorCode } from './errors'
export { GUIDANCE_ID, terminalGuidance } from './guidance'
export { KEY_NAMES_PHRASE, keysProblem, suggestKeyName } from './keys'
export { boundContent, EARLIER_MARKER, fitResult, TRUNCATION_MARKER, type MetaLine, type ResultLayout } from './render/bound'
export * from './render/texts'
export { closeParameters, closeTool } from './tools/close'
export { listParameters, listTool } from './tools/list'
export { openParameters, openTool } from './tools/open'
export { DEFAULT_READ_COUNT, readParameters, readTool } from './tools/read'
export { CANCEL_GRACE_MS, type SendParameterOptions, sendParameters, sendTool, settleOrCancel } from './tools/send'
export { INPUT_STATE_WAIT_MS, inputStateOf, type ToolDeps } from './tools/shared'
export { signalParameters, signalTool } from './tools/signal'
export { checkWindowSize, colsParam, rowsParam, type WindowSizeArgs, windowSizeOf } from './tools/window-size'

/** Plugin name used in a cordis.yml. */
export const name = 'dsh-tool-terminal'

/**
 * Sessions come from `ctx.terminals` and the tools go to `ctx.tools`. `ctx.jobs` is deliberately not
 * injected: background sends look it up at call time, so the six tools work without dsh-jobs.
 */
export const inject = ['terminals', 'tools']

/** The six tools in the order a model meets them. */
export const TOOL_FACTORIES = [openTool, sendTool, readTool, signalTool, closeTool, listTool] as const

/** Register the six tools and the system-prompt guidance; both go away when the plugin unloads. */
export function apply(ctx: Context, options: z.input<typeof Config>): void {
  const config = Config.parse(options)
  const deps: ToolDeps = { ctx, config, holders: new BackgroundHolders() }
  for (const factory of TOOL_FACTORIES) ctx.tools.register(factory(deps))
  ctx.tools.registerGuidance(terminalGuidance(config.enableRunInBackground))
}
