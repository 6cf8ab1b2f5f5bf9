// The real composition a shell-level row measures: agent, provider, policy (sandbox), registry, the
// bash backend and the terminal tools, mounted on a Cordis root with one agent.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context, type Fiber } from '@deepseek-ai/cordis'
import * as agentPlugin from '../../packages/agent/src/index'
import * as sandboxPlugin from '../../packages/sandbox/sandbox-local/src/index'
import * as policyPlugin from '../../packages/sandbox/sandbox-policy/src/index'
import * as localPlugin from '../../packages/subprocess/subprocess-local/src/index'
import * as remotePlugin from '../../packages/subprocess/subprocess-remote/src/index'
import * as bashPlugin from '../../packages/terminal/terminal-bash/src/index'
import * as terminalPlugin from '../../packages/terminal/terminal/src/index'
import * as toolTerminalPlugin from '../../packages/terminal/tool-terminal/src/index'
import * as toolsPlugin from '../../packages/tools/src/index'
import type { ToolResult } from '../../packages/tools/src/index'
import type { TerminalInputKind, TerminalSendResult, TerminalSessionId, TerminalTextSend } from '../../packages/terminal/terminal/src/index'

/**
 * The backend config every mounted stack uses. `DSH_BENCH_WARM_SANDBOX=1` turns on the warm sandbox
 * (`warmSandbox`, off by default) for the confined rows.
 */
export const BACKEND_CONFIG = { disposeGraceMs: 3_000, warmSandbox: process.env.DSH_BENCH_WARM_SANDBOX === '1' }
/** The terminal tools' config, as the default composition (cordis.yml) sets it: a 16 KiB window per result. */
export const TOOLS_CONFIG = { maxResultBytes: 262_144, defaultMaxBytes: 16_384, foldRepeatedLines: true }

/** Where the terminals live: in this process (dsh-subprocess-local), or in a session host at `socketPath` (dsh-subprocess-remote). */
export type Provider = { readonly kind: 'local' } | { readonly kind: 'session-host'; readonly socketPath: string }

/**
 * The real composition with one agent. Unconfined by default, like the raw floor: the backend's own
 * cost is what this suite measures; `workspace-write` adds bubblewrap, as the default composition has.
 */
export async function mount(
  mode: 'danger-full-access' | 'workspace-write' = 'danger-full-access',
  provider: Provider = { kind: 'local' },
  terminals: { readonly detachedTtlMs?: number } = {},
) {
  const root = new Context()
  const fibers: Fiber[] = []
  // A directory of its own: the sandbox refuses /tmp itself as a workspace (its sockets would show).
  const workspace = mkdtempSync(join(tmpdir(), 'dsh-bench-'))
  // A repository, as most workspaces are: a confined open then protects its .git (and checks the mounts).
  if (mode !== 'danger-full-access') execFileSync('git', ['init', '-q', workspace])
  fibers.push(await root.plugin(agentPlugin))
  fibers.push(provider.kind === 'local' ? await root.plugin(localPlugin, {}) : await root.plugin(remotePlugin, { socketPath: provider.socketPath }))
  fibers.push(await root.plugin(policyPlugin, { mode, workspaceRoot: workspace }))
  if (mode !== 'danger-full-access') fibers.push(await root.plugin(sandboxPlugin, {}))
  // One agent opens 50 sessions at once (and the memory row 101), over the default per-agent bound of 16.
  fibers.push(await root.plugin(terminalPlugin, { maxSessionsPerAgent: 128, ...terminals }))
  fibers.push(await root.plugin(bashPlugin, BACKEND_CONFIG))
  fibers.push(await root.plugin(toolsPlugin, {}))
  fibers.push(await root.plugin(toolTerminalPlugin, TOOLS_CONFIG))
  let agent = await root.agents.create()
  const registry = root.terminals
  const tools = root.tools
  let calls = 0
  return {
    /** The root context (for suites that reach a service directly). */
    root,
    /** One tool call as a host makes it (`ctx.tools.execute`), failing the bench on an error result. */
    call: async (name: string, args: Record<string, unknown>): Promise<ToolResult> => {
      const result = await tools.execute({ callId: `bench-${++calls}`, name, arguments: args, agent })
      if (result.isError) throw new Error(`bench: ${name} failed: ${result.content.map((block) => block.text).join('\n')}`)
      return result
    },
    open: async () => (await registry.spawn(agent, { type: 'shell', cwd: workspace })).sessionId,
    /** One send of `text` + Enter (unless `request.submit` is false), awaited to its end and release. */
    run: async (id: TerminalSessionId, text: string, request: Partial<Omit<TerminalTextSend, 'text'>> = {}) => {
      const send = registry.startSend(agent, id, { text, submit: true, ...request })
      const result = await send.done
      await send.released // the session takes the next send once the reservation is dropped
      return result
    },
    inputState: (id: TerminalSessionId) => registry.inputState(agent, id),
    close: (id: TerminalSessionId) => registry.close(agent, id),
    /** End this stack's agent (its sessions detach when `detachedTtlMs` is set) and go on as a new one. */
    replaceAgent: async () => {
      await agent.dispose()
      agent = await root.agents.create()
    },
    /** Adopt a detached session as this stack's agent (`terminal_open` resume without the tool). */
    resume: (id: TerminalSessionId) => registry.resume(agent, id, 'shell'),
    dispose: async () => {
      await agent.dispose()
      for (const fiber of fibers.reverse()) await fiber.dispose()
      rmSync(workspace, { recursive: true, force: true })
    },
  }
}
export type Stack = Awaited<ReturnType<typeof mount>>

/** Fail the bench unless the send settled as `stdin_read` with `output` (and, when given, told the input `kind`). */
export function exact(result: TerminalSendResult, output: string, what: string, kind?: TerminalInputKind): void {
  if (result.waitReason !== 'stdin_read' || !result.viewport.includes(output) || (kind && result.input?.kind !== kind)) {
    throw new Error(`bench: ${what} did not settle exactly: ${JSON.stringify({ ...result, viewport: result.viewport.slice(-200) })}`)
  }
}
