import type { Context } from '@deepseek-ai/cordis'
import type {} from 'dsh-jobs'
import type {} from 'dsh-terminal'
import type {} from 'dsh-tools'
import type { z } from 'zod'
import { BackgroundHolders } from './background-holders'
import { Config } from './config'
import { terminalGuidance } from './guidance'
import { closeTool } from './tools/close'
import { listTool } from './tools/list'
import { openTool } from './tools/open'
import { readTool } from './tools/read'
import type { ToolDeps } from './tools/tool-parts'
import { sendTool } from './tools/send'
import { signalTool } from './tools/signal'

export { BACKGROUND_JOB_KIND } from './background'
export { Config, type TerminalToolsConfig } from './config'
export type { TerminalToolErrorCode } from './errors'
export { GUIDANCE_ID } from './guidance'

/** Plugin name used in a cordis.yml. */
export const name = 'dsh-tool-terminal'

/**
 * Sessions come from `ctx.terminals` and the tools go to `ctx.tools`. `ctx.jobs` is deliberately not
 * injected: background sends look it up at call time, so the six tools work without dsh-jobs.
 */
export const inject = ['terminals', 'tools']

/** The six tools in the order a model meets them. */
const TOOL_FACTORIES = [openTool, sendTool, readTool, signalTool, closeTool, listTool] as const

/** Register the six tools and the system-prompt guidance; both go away when the plugin unloads. */
export function apply(ctx: Context, options: z.input<typeof Config>): void {
  const config = Config.parse(options)
  const deps: ToolDeps = { ctx, terminals: ctx.terminals, config, holders: new BackgroundHolders() }
  for (const factory of TOOL_FACTORIES) ctx.tools.register(factory(deps))
  ctx.tools.registerGuidance(terminalGuidance(config.enableRunInBackground))
}
