import type { Tool } from './define'
import { errorMessage } from 'dsh-basics'
import { errorCode, ToolError } from './errors'
import {
  TOOL_KINDS,
  type ToolContent,
  type ToolExecuteRequest,
  type ToolOutput,
  type ToolOutputView,
  type ToolPresentation,
  type ToolPresentationIntent,
  type ToolResult,
} from './types'

/** Issues listed in an INVALID_ARGUMENTS message before the rest are summarised. */
const MAX_LISTED_ISSUES = 8

/** One text block, the shape of every error result. */
export function textContent(text: string): ToolContent {
  return { type: 'text', text }
}

/**
 * Run one call of a known tool: agent check, argument validation, execution, presentation, and
 * `finalizeContent` last. Never rejects: every failure is an `Error: <message>` result with a code.
 * `before`, when given, is called with the validated arguments right before the tool runs; a promise it returns is awaited.
 */
export async function runTool(
  tool: Tool,
  request: ToolExecuteRequest,
  before?: (args: Record<string, unknown>) => Promise<void> | undefined,
): Promise<ToolResult> {
  const { callId, name } = request
  const signal = request.signal ?? new AbortController().signal
  const parsed = parseArguments(tool, request.arguments)
  const rawInput = parsed.ok ? parsed.value : parsed.input
  const fail = (code: string, message: string, presentation = presentCall(tool, rawInput, parsed.ok)) =>
    finalize(tool, { callId, name, content: [textContent(`Error: ${message}`)], isError: true, error: { code, message }, presentation })

  if (signal.aborted) return fail('CANCELLED', `tool call ${callId} (${name}) was cancelled before it started`)
  const agent = request.agent
  if (tool.requiresAgent && !agent) return fail('NO_AGENT', `tool "${name}" requires an initiating agent`)
  if (agent && !agent.live) return fail('AGENT_ENDED', `agent ${agent.id} has ended; tool "${name}" cannot run for it`)
  if (!parsed.ok) return fail('INVALID_ARGUMENTS', parsed.message)

  const args = parsed.value
  const callPresentation = presentCall(tool, args, true)
  const waiting = before?.(args)
  if (waiting) await waiting
  let view: ToolOutputView
  let error: ToolResult['error']
  try {
    view = normalizeOutput(name, await tool.execute(args, { callId, name, agent, signal }))
  } catch (thrown) {
    const message = errorMessage(thrown)
    error = { code: signal.aborted && isAbortError(thrown) ? 'CANCELLED' : (errorCode(thrown) ?? 'TOOL_FAILED'), message }
    view = { content: [textContent(`Error: ${message}`)], isError: true }
  }
  const presentation = mergePresentation(callPresentation, safePresent(tool, args, view))
  const result: ToolResult = { callId, name, content: [...view.content], isError: view.isError, presentation }
  if (view.meta) result.meta = view.meta
  if (error) result.error = error
  return finalize(tool, result)
}

/** The per-call presentation: defaults (tool kind, tool name, the input) with the tool's intent. */
export function presentCall(tool: Tool, input: unknown, valid: boolean): ToolPresentation {
  const defaults: ToolPresentation = { kind: tool.kind ?? 'other', title: tool.name, rawInput: input }
  return valid ? mergePresentation(defaults, safePresent(tool, input)) : defaults
}

type Parsed = { ok: true; value: Record<string, unknown> } | { ok: false; input: unknown; message: string }

/** Accept an object or its JSON text (missing, null and '' mean `{}`), then validate with zod. */
export function parseArguments(tool: Tool, raw: unknown): Parsed {
  let input = raw
  if (input === undefined || input === null || input === '') input = {}
  else if (typeof input === 'string') {
    try {
      input = JSON.parse(input)
    } catch (error) {
      return { ok: false, input: raw, message: `invalid arguments for tool "${tool.name}": arguments are not valid JSON (${errorMessage(error)})` }
    }
  }
  let result: ReturnType<Tool['parameters']['safeParse']>
  try {
    result = tool.parameters.safeParse(input)
  } catch (error) {
    return { ok: false, input, message: `invalid arguments for tool "${tool.name}": ${errorMessage(error)}` }
  }
  if (result.success) return { ok: true, value: result.data as Record<string, unknown> }
  const issues = result.error.issues
  const listed = issues.slice(0, MAX_LISTED_ISSUES).map((issue) => `${formatPath(issue.path)}: ${issue.message}`)
  if (issues.length > listed.length) listed.push(`and ${issues.length - listed.length} more`)
  return { ok: false, input, message: `invalid arguments for tool "${tool.name}": ${listed.join('; ')}` }
}

function formatPath(path: readonly PropertyKey[]): string {
  if (!path.length) return 'arguments'
  return path
    .map((segment, index) => {
      if (typeof segment === 'number') return `[${segment}]`
      return index === 0 ? String(segment) : `.${String(segment)}`
    })
    .join('')
}

function normalizeOutput(name: string, output: string | ToolOutput): ToolOutputView {
  if (typeof output === 'string') return { content: [textContent(output)], isError: false }
  if (!output || !Array.isArray(output.content) || !output.content.every(isContent)) {
    throw new ToolError('INVALID_RESULT', `tool "${name}" returned an invalid result (expected a string or {content: [{type: 'text', text}]})`)
  }
  const view: ToolOutputView = { content: output.content, isError: output.isError === true }
  if (output.meta) view.meta = output.meta
  return view
}

function finalize(tool: Tool, result: ToolResult): ToolResult {
  if (!tool.finalizeContent) return result
  try {
    const content = tool.finalizeContent(result.content, { callId: result.callId, name: result.name, isError: result.isError })
    if (!Array.isArray(content) || !content.every(isContent)) throw new Error('finalizeContent must return content blocks')
    return { ...result, content }
  } catch (error) {
    const message = `tool "${tool.name}" failed to finalize its result: ${errorMessage(error)}`
    const { meta: _dropped, ...rest } = result
    return { ...rest, content: [textContent(`Error: ${message}`)], isError: true, error: { code: 'FINALIZE_FAILED', message } }
  }
}

function safePresent(tool: Tool, args: unknown, result?: ToolOutputView): ToolPresentationIntent | undefined {
  if (!tool.present) return undefined
  try {
    return tool.present(args as never, result)
  } catch {
    // Presentation is cosmetic: a failing intent must not turn a call into an error.
    return undefined
  }
}

function mergePresentation(base: ToolPresentation, intent: ToolPresentationIntent | undefined): ToolPresentation {
  if (!intent || typeof intent !== 'object') return base
  const merged: ToolPresentation = { ...base }
  if (intent.kind !== undefined && TOOL_KINDS.includes(intent.kind)) merged.kind = intent.kind
  if (typeof intent.title === 'string' && intent.title) merged.title = intent.title
  if ('rawInput' in intent) merged.rawInput = intent.rawInput
  if (intent.card?.type === 'terminal') merged.card = { ...intent.card }
  return merged
}

function isContent(block: unknown): block is ToolContent {
  return typeof block === 'object' && block !== null && (block as ToolContent).type === 'text' && typeof (block as ToolContent).text === 'string'
}

function isAbortError(error: unknown): boolean {
  const candidate = error as { name?: unknown; code?: unknown } | null
  return candidate?.name === 'AbortError' || candidate?.code === 'ABORT_ERR'
}
