import { Context, type Fiber } from '@deepseek-ai/cordis'
import * as agentPlugin from 'dsh-agent'
import type { Agent } from 'dsh-agent'
import * as jobsPlugin from 'dsh-jobs'
import * as sandboxPolicyPlugin from 'dsh-sandbox-policy'
import * as subprocessLocalPlugin from 'dsh-subprocess-local'
import * as subprocessRemotePlugin from 'dsh-subprocess-remote'
import * as terminalPlugin from 'dsh-terminal'
import * as bashPlugin from 'dsh-terminal-bash'
import * as toolJobsPlugin from 'dsh-tool-jobs'
import * as toolTerminalPlugin from 'dsh-tool-terminal'
import * as toolsPlugin from 'dsh-tools'
import type { ToolResult } from 'dsh-tools'

/** The real composition the real-bash tests call through `ctx.tools.execute`, and how to take it down. */
export interface RealTools {
  readonly root: Context
  /** One tool call as a host makes it. */
  call(agent: Agent, name: string, args?: unknown, signal?: AbortSignal): Promise<ToolResult>
  /** Unload every plugin, last mounted first. */
  dispose(): Promise<void>
}

/** What else a real stack may differ in: dsh-subprocess-remote (with its config) instead of the local provider, and the mode. */
export interface RealToolsOptions {
  /** Mount dsh-subprocess-remote with this config instead of dsh-subprocess-local. */
  readonly remote?: Parameters<typeof subprocessRemotePlugin.apply>[1]
  /** The sandbox mode (default `danger-full-access`; a confined one needs no sandbox for what these tests refuse). */
  readonly mode?: 'danger-full-access' | 'workspace-write'
}

/**
 * Mount the tools, the jobs, the local provider, the registry and the bash backend, unconfined:
 * these tests are about the tools (dsh-terminal-bash tests the sandboxed shell). `terminals` is
 * dsh-terminal's config (e.g. `detachedTtlMs` for the tests of detached sessions).
 */
export async function mountRealTools(terminals: { detachedTtlMs?: number } = {}, options: RealToolsOptions = {}): Promise<RealTools> {
  const root = new Context()
  const fibers: Fiber[] = []
  fibers.push(await root.plugin(agentPlugin))
  fibers.push(await root.plugin(toolsPlugin))
  fibers.push(await root.plugin(jobsPlugin, {}))
  fibers.push(await root.plugin(toolJobsPlugin, {}))
  fibers.push(options.remote ? await root.plugin(subprocessRemotePlugin, options.remote) : await root.plugin(subprocessLocalPlugin, {}))
  fibers.push(await root.plugin(sandboxPolicyPlugin, { mode: options.mode ?? 'danger-full-access' }))
  fibers.push(await root.plugin(terminalPlugin, terminals))
  fibers.push(await root.plugin(bashPlugin, { idleSilenceMs: 5000, timeoutMs: 20000 }))
  fibers.push(await root.plugin(toolTerminalPlugin, {}))
  let counter = 0
  return {
    root,
    call: (agent, name, args = {}, signal) => root.tools.execute({ callId: `real-${++counter}`, name, arguments: args, agent, ...(signal ? { signal } : {}) }),
    dispose: async () => {
      for (const fiber of fibers.reverse()) await fiber.dispose()
    },
  }
}

/** The text blocks of a result, joined. */
export function text(result: ToolResult): string {
  return result.content.map((block) => block.text).join('\n')
}
