import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Agent } from 'dsh-agent'
import type { ToolResult } from 'dsh-tools'
import type { Composition } from '../src/compose/load-config'
import { DANGER_CONFIG, load, tempDir } from './helpers'

/** A real-bash composition (danger-full-access, so no sandbox is needed) with the audit log mounted. */
export interface AuditedHost {
  composition: Composition
  agent: Agent
  /** The audit log's path. */
  file: string
  /** Run a tool as the agent; its text, meta and error code. */
  call(tool: string, args?: Record<string, unknown>): Promise<{ text: string; meta: Record<string, unknown>; code?: string; result: ToolResult }>
  /** End the agent and unload the composition (the log gets its `audit_stop`). */
  close(): Promise<void>
}

/** The overlay a user writes: the danger-full-access composition plus the audit entry. */
export function auditedYaml(file: string, maxArgumentBytes?: number): string {
  const extra = maxArgumentBytes === undefined ? '' : `\n    maxArgumentBytes: ${maxArgumentBytes}`
  return `- id: base
  name: cordis:include
  config:
    path: ${JSON.stringify(DANGER_CONFIG)}
- id: audit
  name: dsh-terminal-mcp/audit
  config:
    file: ${JSON.stringify(file)}${extra}
`
}

/** A fresh directory holding the overlay; the log goes to `<dir>/logs/audit.jsonl` unless told otherwise. */
export async function auditedDirectory(maxArgumentBytes?: number): Promise<{ dir: string; configPath: string; file: string; remove: () => Promise<void> }> {
  const { dir, remove } = await tempDir('dsh-audit-')
  const file = join(dir, 'logs', 'audit.jsonl')
  const configPath = join(dir, 'cordis.yml')
  await writeFile(configPath, auditedYaml(file, maxArgumentBytes))
  return { dir, configPath, file, remove }
}

/** Mount the audited composition at `configPath` and create one agent. */
export async function startAuditedHost(configPath: string, file: string): Promise<AuditedHost> {
  const composition = await load(configPath)
  const agent = await composition.agents.create()
  let calls = 0
  return {
    composition,
    agent,
    file,
    async call(tool, args = {}) {
      const result = await composition.tools.execute({ callId: `audit-test-${++calls}`, name: tool, arguments: args, agent })
      const text = result.content.map((part) => part.text).join('')
      const code = result.error?.code
      return { text, meta: result.meta ?? {}, ...(code ? { code } : {}), result }
    },
    async close() {
      await agent.dispose().catch(() => {})
      await composition.dispose()
    },
  }
}
