import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import type { Agent } from 'dsh-agent'
import type { ToolService } from 'dsh-tools'
import { HOST_VERSION } from '../version'
import { annotationsForKind } from './annotations'
import { DEFAULT_PROGRESS_INTERVAL_MS, startProgress } from './progress'
import { type McpToolResult, toMcpResult } from './results'

/** Name the server reports in `initialize`. */
export const SERVER_NAME = 'dsh-terminal'

/** What one MCP server instance serves. */
export interface McpServerOptions {
  /** The composition's tool registry: its tools, schemas and call pipeline. */
  tools: ToolService
  /** The agent every call of this connection runs as (it owns the sessions and jobs). */
  agent: Agent
  /** Gap between progress notifications of a call that sent a progress token. */
  progressIntervalMs?: number
  /** The signal a call runs with, from the SDK's (default: that one); see `ConnectionEnd`. */
  callSignal?: (sdk: AbortSignal) => AbortSignal
}

/**
 * An MCP server (official SDK, low-level `Server`) exposing every tool of `ctx.tools`: the JSON
 * Schemas as input schemas, annotations from the presentation kinds, the tool guidance as
 * `instructions`. Calls run as `agent` and are cancelled with the client's request cancellation
 * (through `callSignal`, which keeps a disconnect from counting as one).
 */
export function createMcpServer(options: McpServerOptions): Server {
  const { tools, agent } = options
  const callSignal = options.callSignal ?? ((signal: AbortSignal) => signal)
  const guidance = tools.renderGuidance()
  const server = new Server({ name: SERVER_NAME, version: HOST_VERSION }, { capabilities: { tools: {} }, ...(guidance ? { instructions: guidance } : {}) })

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.list().map((info) => ({
      name: info.name,
      description: info.description,
      inputSchema: info.inputSchema as { type: 'object'; [key: string]: unknown },
      annotations: annotationsForKind(tools.get(info.name)?.kind ?? 'other'),
    })),
  }))

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<McpToolResult> => {
    const { name, arguments: args } = request.params
    const token = request.params._meta?.progressToken
    const stopProgress =
      token === undefined
        ? undefined
        : startProgress(
            token,
            tools.describeCall({ name, arguments: args }).title,
            (params) => extra.sendNotification({ method: 'notifications/progress', params }),
            options.progressIntervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS,
          )
    try {
      const result = await tools.execute({ callId: `mcp-${String(extra.requestId)}`, name, arguments: args ?? {}, agent, signal: callSignal(extra.signal) })
      return toMcpResult(result)
    } finally {
      stopProgress?.()
    }
  })

  return server
}
