import type { Agent } from 'dsh-agent'

/** The ACP tool kinds a UI groups calls by; `other` when nothing fits. */
export const TOOL_KINDS = ['read', 'edit', 'delete', 'move', 'search', 'execute', 'think', 'fetch', 'other'] as const

/** One ACP tool kind; see {@link TOOL_KINDS}. */
export type ToolKind = (typeof TOOL_KINDS)[number]

/** A text content block, the shape MCP and ACP share. */
export interface TextContent {
  type: 'text'
  text: string
}

/** A content block of a tool result (text only for now; the union leaves room for more). */
export type ToolContent = TextContent

/**
 * A card a UI may render a result as instead of plain text: `terminal` shows the text as terminal
 * output, optionally tied to a session.
 */
export interface ToolCard {
  type: 'terminal'
  /** Terminal session the output came from, when there is one. */
  sessionId?: string
}

/** How a host should present a call or its result (ACP `kind`, `title`, `rawInput`, an optional card). */
export interface ToolPresentation {
  kind: ToolKind
  title: string
  /** The call's input as the UI should show it; defaults to the parsed arguments. */
  rawInput?: unknown
  card?: ToolCard
}

/** What a tool's `present` returns: any fields it wants to override over the defaults. */
export type ToolPresentationIntent = Partial<ToolPresentation>

/** What a tool's `execute` returns when a bare string (one text block) is not enough. */
export interface ToolOutput {
  content: ToolContent[]
  /** True when the tool reports a failure without throwing. */
  isError?: boolean
  /** Structured data for hosts and tests; never shown to the model. */
  meta?: Record<string, unknown>
}

/** The view of a finished call that `present` receives for its per-result intent. */
export interface ToolOutputView {
  content: readonly ToolContent[]
  isError: boolean
  meta?: Record<string, unknown>
}

/** Everything a tool's `execute` learns about the call besides its arguments. */
export interface ToolCallContext<A extends Agent | undefined = Agent> {
  callId: string
  /** Name of the tool being called. */
  name: string
  /** The initiating agent: the owner of whatever the call creates. */
  agent: A
  /** Aborted when the host cancels the call; tools should return promptly. */
  signal: AbortSignal
}

/** What `finalizeContent` learns about the result it is about to bound or reshape. */
export interface FinalizeInfo {
  callId: string
  name: string
  isError: boolean
}

/** A request to run one tool call through `ctx.tools.execute`. */
export interface ToolExecuteRequest {
  callId: string
  name: string
  /** The model's arguments: an object, or its JSON text; missing, null and '' mean `{}`. */
  arguments?: unknown
  agent?: Agent
  signal?: AbortSignal
}

/** The structured error of a failed call: a stable code plus the message the model saw. */
export interface ToolCallError {
  code: string
  message: string
}

/** The outcome of `ctx.tools.execute`: always resolved, errors included, already finalized. */
export interface ToolResult {
  callId: string
  name: string
  content: ToolContent[]
  isError: boolean
  meta?: Record<string, unknown>
  /** Present when the call failed in the pipeline or the tool threw; absent for tool-reported errors. */
  error?: ToolCallError
  /** Per-result presentation intent (the per-call intent with the tool's result overrides). */
  presentation: ToolPresentation
}

/** What `ctx.tools.list()` returns per tool: the model-facing declaration. */
export interface ToolInfo {
  name: string
  description: string
  /** JSON Schema (draft 2020-12, input side) of the arguments object, without `$schema`. */
  inputSchema: Record<string, unknown>
}
