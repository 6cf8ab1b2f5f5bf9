import type { Agent } from 'dsh-agent'
import { z } from 'zod'
import { errorMessage } from 'dsh-basics'
import { ToolError } from './errors'
import {
  TOOL_KINDS,
  type FinalizeInfo,
  type ToolCallContext,
  type ToolContent,
  type ToolKind,
  type ToolOutput,
  type ToolOutputView,
  type ToolPresentationIntent,
} from './types'

/** A zod object schema: the only shape tool arguments may take (model APIs require an object). */
export type ToolParameters = z.ZodObject<z.ZodRawShape, z.core.$ZodObjectConfig>

/** Tool names the common model APIs accept. */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/

/** Marks objects made by {@link defineTool}; global so two copies of this package agree. */
const toolBrand: unique symbol = Symbol.for('dsh-tools.tool') as never

/**
 * What a tool author writes. `R` is `false` only for tools that run without an initiating agent;
 * by default `ctx.tools.execute` refuses a call without one (`NO_AGENT`).
 */
export interface ToolSpec<P extends ToolParameters = ToolParameters, R extends boolean = true> {
  /** Model-facing name, `[A-Za-z0-9_-]{1,64}`, unique among registered tools. */
  name: string
  /** Model-facing description. */
  description: string
  /** Arguments schema; `.describe()` texts become the JSON Schema parameter descriptions. */
  parameters: P
  /** Default ACP kind for the call's presentation; `other` when omitted. */
  kind?: ToolKind
  /** Set to `false` for tools that may run without an initiating agent. */
  requiresAgent?: R
  /** Run the call with validated arguments; a thrown error becomes an `Error: <message>` result. */
  execute(args: z.output<P>, call: ToolCallContext<R extends false ? Agent | undefined : Agent>): string | ToolOutput | Promise<string | ToolOutput>
  /**
   * Presentation intent: called without `result` for the call, then with it for the result.
   * Returned fields override the defaults (`kind`, title = tool name, rawInput = arguments).
   */
  present?(args: z.output<P>, result?: ToolOutputView): ToolPresentationIntent
  /** Last step of every call to this tool, errors included: e.g. a byte cap on the text. */
  finalizeContent?(content: ToolContent[], info: FinalizeInfo): ToolContent[]
}

/** A defined tool: the spec plus its precomputed, frozen JSON Schema. Register it on `ctx.tools`. */
export interface Tool<P extends ToolParameters = ToolParameters, R extends boolean = boolean> extends ToolSpec<P, R> {
  readonly inputSchema: Readonly<Record<string, unknown>>
  readonly requiresAgent: R
  readonly [toolBrand]: true
}

/**
 * Check a tool spec and compute the JSON Schema the model sees (zod 4 `toJSONSchema`, input side,
 * `$schema` stripped). Throws `INVALID_TOOL` for a bad name or a schema JSON cannot express.
 */
export function defineTool<P extends ToolParameters, R extends boolean = true>(spec: ToolSpec<P, R>): Tool<NoInfer<P>, NoInfer<R>> {
  if (typeof spec.name !== 'string' || !TOOL_NAME.test(spec.name)) {
    throw new ToolError('INVALID_TOOL', `tool name ${JSON.stringify(spec.name)} must match ${TOOL_NAME.source}`)
  }
  if (typeof spec.description !== 'string' || !spec.description.trim()) {
    throw new ToolError('INVALID_TOOL', `tool "${spec.name}" needs a non-empty description`)
  }
  if (typeof spec.execute !== 'function') {
    throw new ToolError('INVALID_TOOL', `tool "${spec.name}" needs an execute function`)
  }
  if (spec.kind !== undefined && !TOOL_KINDS.includes(spec.kind)) {
    throw new ToolError('INVALID_TOOL', `tool "${spec.name}" has unknown kind "${String(spec.kind)}"; use one of ${TOOL_KINDS.join(', ')}`)
  }
  return Object.freeze({
    ...spec,
    requiresAgent: (spec.requiresAgent ?? true) as R,
    inputSchema: inputSchemaOf(spec.name, spec.parameters),
    [toolBrand]: true as const,
  })
}

/** True for objects made by {@link defineTool}. */
export function isTool(value: unknown): value is Tool {
  return typeof value === 'object' && value !== null && (value as { [toolBrand]?: unknown })[toolBrand] === true
}

function inputSchemaOf(name: string, parameters: unknown): Readonly<Record<string, unknown>> {
  if (typeof (parameters as { safeParse?: unknown } | null)?.safeParse !== 'function') {
    throw new ToolError('INVALID_TOOL', `tool "${name}": parameters must be a zod object schema`)
  }
  let schema: Record<string, unknown>
  try {
    schema = z.toJSONSchema(parameters as z.ZodType, { io: 'input', target: 'draft-2020-12' }) as Record<string, unknown>
  } catch (error) {
    throw new ToolError('INVALID_TOOL', `tool "${name}": parameters cannot be expressed as JSON Schema: ${errorMessage(error)}`, { cause: error })
  }
  const { $schema: _ignored, ...rest } = schema
  if (rest.type !== 'object') {
    throw new ToolError('INVALID_TOOL', `tool "${name}": parameters must be a zod object schema, got JSON Schema type ${JSON.stringify(rest.type)}`)
  }
  return deepFreeze(rest)
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const inner of Object.values(value)) deepFreeze(inner)
  }
  return value
}
