import type { ToolKind } from 'dsh-tools'

/** The MCP tool annotations a host derives (a subset of MCP's `ToolAnnotations`). */
export interface ToolHints {
  readOnlyHint?: boolean
  destructiveHint?: boolean
  openWorldHint?: boolean
}

/**
 * MCP hints from a tool's presentation kind, so clients can auto-approve reads and warn before a
 * close: read/search/think only look; fetch looks outside; delete/edit/move change or remove state.
 * Execute and other say only that they are not read-only (MCP then assumes they may be destructive,
 * which is the honest default for a shell).
 */
export function annotationsForKind(kind: ToolKind): ToolHints {
  switch (kind) {
    case 'read':
    case 'search':
    case 'think':
      return { readOnlyHint: true }
    case 'fetch':
      return { readOnlyHint: true, openWorldHint: true }
    case 'delete':
    case 'edit':
    case 'move':
      return { readOnlyHint: false, destructiveHint: true }
    default:
      return { readOnlyHint: false }
  }
}
