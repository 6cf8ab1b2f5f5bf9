import { Context, type Fiber } from '@deepseek-ai/cordis'
import * as agentPlugin from 'dsh-agent'
import type { Agent } from 'dsh-agent'
import * as jobsPlugin from 'dsh-jobs'
import * as terminalPlugin from 'dsh-terminal'
import * as toolJobsPlugin from 'dsh-tool-jobs'
import * as toolTerminalPlugin from 'dsh-tool-terminal'
import * as toolsPlugin from 'dsh-tools'
import type { ToolResult } from 'dsh-tools'
import type { z } from 'zod'
import { StubBackend } from './stub'

/** Options of {@link setup}: which optional services to mount and the plugin's config. */
export interface SetupOptions {
  config?: z.input<typeof toolTerminalPlugin.Config>
  /** Mount dsh-jobs and dsh-tool-jobs (default true). */
  jobs?: boolean
  /** Per-owner running job limit of dsh-jobs. */
  maxActiveJobsPerOwner?: number
}

/** A root with the spine, a stub `shell` backend and dsh-tool-terminal mounted. */
export interface Harness {
  root: Context
  backend: StubBackend
  agent: Agent
  /** Run one tool call through `ctx.tools.execute` for `agent` (default: the harness agent). */
  call(name: string, args?: unknown, options?: { agent?: Agent | null; signal?: AbortSignal }): Promise<ToolResult>
  /** The single text block of a result. */
  text(result: ToolResult): string
  /** Tear everything down (awaits session and job cleanup). */
  dispose(): Promise<void>
}

let live: Harness[] = []

/** Build a harness; {@link disposeAll} in `afterEach` tears down every harness a test built. */
export async function setup(options: SetupOptions = {}): Promise<Harness> {
  const root = new Context()
  const fibers: Fiber[] = []
  fibers.push(await root.plugin(agentPlugin))
  fibers.push(await root.plugin(toolsPlugin))
  fibers.push(await root.plugin(terminalPlugin))
  if (options.jobs !== false) {
    fibers.push(await root.plugin(jobsPlugin, { maxActiveJobsPerOwner: options.maxActiveJobsPerOwner ?? 10 }))
    fibers.push(await root.plugin(toolJobsPlugin, {}))
  }
  const backend = new StubBackend()
  fibers.push(
    await root.plugin({
      name: 'stub-backend',
      inject: ['terminals'],
      apply: (ctx: Context) => {
        ctx.terminals.registerBackend(backend)
      },
    }),
  )
  fibers.push(await root.plugin(toolTerminalPlugin, options.config ?? {}))
  const agent = await root.agents.create()
  let counter = 0
  const harness: Harness = {
    root,
    backend,
    agent,
    call: (name, args, callOptions = {}) =>
      root.tools.execute({
        callId: `call-${++counter}`,
        name,
        arguments: args,
        ...(callOptions.agent === null ? {} : { agent: callOptions.agent ?? agent }),
        ...(callOptions.signal ? { signal: callOptions.signal } : {}),
      }),
    text: (result) => {
      if (result.content.length !== 1) throw new Error(`expected one text block, got ${result.content.length}`)
      return result.content[0]!.text
    },
    dispose: async () => {
      for (const fiber of fibers.reverse()) await fiber.dispose()
    },
  }
  live.push(harness)
  return harness
}

/** Dispose every harness built since the previous call. */
export async function disposeAll(): Promise<void> {
  const harnesses = live
  live = []
  for (const harness of harnesses) await harness.dispose()
}

/** Let queued microtasks and immediates run. */
export async function flush(rounds = 3): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve))
}
