import type { ToolResult } from 'dsh-tools'

/** An MCP `CallToolResult` as this host produces it: text content plus the structured facts. */
export interface McpToolResult {
  [key: string]: unknown
  content: { type: 'text'; text: string }[]
  isError: boolean
  structuredContent?: Record<string, unknown>
}

/**
 * The MCP shape of a `ctx.tools` result: the text blocks the model reads, `isError` for errors, and
 * the structured facts (`meta`, plus `error: {code, message}` for a failed call) as structured content.
 */
export function toMcpResult(result: ToolResult): McpToolResult {
  const mcp: McpToolResult = {
    content: result.content.map((block) => ({ type: 'text', text: block.text })),
    isError: result.isError,
  }
  const structured: Record<string, unknown> = { ...(result.meta ?? {}) }
  if (result.error) structured.error = { ...result.error }
  if (Object.keys(structured).length) mcp.structuredContent = toJson(structured)
  return mcp
}

/** A JSON-safe copy: structured content crosses the wire as JSON, so drop what JSON cannot carry. */
function toJson(value: Record<string, unknown>): Record<string, unknown> {
  try {
    return JSON.parse(JSON.stringify(value)) as Record<string, unknown>
  } catch {
    return {}
  }
}
