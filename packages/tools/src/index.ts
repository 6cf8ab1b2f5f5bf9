import type { Context } from '@deepseek-ai/cordis'
import { z } from 'zod'
import { ToolService } from './service'

export { defineTool, isTool, type Tool, type ToolParameters, type ToolSpec } from './define'
export { errorCode, ToolError, type ToolErrorCode } from './errors'
export { DEFAULT_GUIDANCE_ORDER, renderGuidance, sortGuidance, type GuidanceSection } from './guidance'
export type { ToolCallEvent, ToolCallObserver } from './observe'
export { regexSourceParam } from './params'
export { textContent } from './run'
export { refineResultWindow, resolveResultWindow, type ResultWindowConfig } from './result-window'
export { FoldedOutput, type OutputGap, type OutputShape, type OutputShapeOptions, type OutputWindowOptions, shapeOutput } from './shape'
export { ToolService } from './service'
export { formatByteSize } from './size'
export * from './types'

/** Plugin name used in a cordis.yml. */
export const name = 'dsh-tools'

/** The tool registry has no configuration; byte caps belong to each tool's `finalizeContent`. */
export const Config = z.object({}).prefault({})

/** Provide `ctx.tools`. */
export function apply(ctx: Context, _config: z.input<typeof Config>): void {
  ctx.plugin(ToolService)
}
