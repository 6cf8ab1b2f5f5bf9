import type { Context } from '@deepseek-ai/cordis'
import { z } from 'zod'
import { AgentService } from './service'

export { Agent, AgentDisposeError, type AgentCleanup } from './agent'
export { AgentError, AgentService, type CreateAgentOptions } from './service'
export { directCalls } from './direct-calls'

/** Plugin name used in a cordis.yml. */
export const name = 'dsh-agent'

/** The agent registry has no configuration. */
export const Config = z.object({}).prefault({})

/** Provide `ctx.agents`. */
export function apply(ctx: Context, _config: z.input<typeof Config>): void {
  ctx.plugin(AgentService)
}
