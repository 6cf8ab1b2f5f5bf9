import { Context, type Fiber } from '@deepseek-ai/cordis'
import * as agentPlugin from 'dsh-agent'
import type { Agent } from 'dsh-agent'
import { Sandbox, type SandboxPolicy } from 'dsh-sandbox'
import * as policyPlugin from 'dsh-sandbox-policy'
import { SubprocessRuntime, type SubprocessTerminalHandle, type TerminalSpawnSpec } from 'dsh-subprocess'
import * as terminalPlugin from 'dsh-terminal'
import type { TerminalSessionService } from 'dsh-terminal'
import * as bashPlugin from '../../src/index'
import type { ShellBackendConfigInput } from '../../src/index'
import { NONCE_VARIABLE } from '../../src/prompt-protocol'
import { FakeTerminal, marker } from './fake-terminal'

/** A subprocess provider whose terminals are {@link FakeTerminal}s that print a ready prompt. */
export class FakeRuntime extends SubprocessRuntime {
  readonly specs: TerminalSpawnSpec[] = []
  readonly terminals: FakeTerminal[] = []
  /** Runs before a spawn resolves; a test can hold or fail it. */
  beforeSpawn: ((spec: TerminalSpawnSpec) => Promise<void>) | undefined
  /** When false, the fake shell prints nothing (startup then waits for the test). */
  printPrompt = true

  constructor(ctx: Context) {
    super(ctx)
  }

  async spawnTerminal(spec: TerminalSpawnSpec): Promise<SubprocessTerminalHandle> {
    this.specs.push(spec)
    await this.beforeSpawn?.(spec)
    const fake = new FakeTerminal()
    if (this.printPrompt) fake.emit(`${marker(0, nonceOf(spec))}dsh> `)
    this.terminals.push(fake)
    return fake
  }
}

/** A `ctx.sandbox` that records every request and wraps argv in `fake-jail <mode> --`. */
export class FakeSandbox extends Sandbox {
  readonly requests: { argv: readonly string[]; policy: SandboxPolicy }[] = []
  /** Replace the result (or throw) for the next requests. */
  confineWith: ((argv: readonly string[], policy: SandboxPolicy) => Promise<string[]>) | undefined

  constructor(ctx: Context) {
    super(ctx)
  }

  async confine(argv: readonly string[], policy: SandboxPolicy): Promise<string[]> {
    this.requests.push({ argv: [...argv], policy: { ...policy } })
    if (this.confineWith) return this.confineWith(argv, policy)
    return ['fake-jail', policy.mode, '--', ...argv]
  }
}

/** The nonce a backend handed to a spawn. */
export function nonceOf(spec: TerminalSpawnSpec): number {
  return Number(spec.env?.[NONCE_VARIABLE])
}

/** Agents, the registry, a fake provider and this backend, mounted on one root. */
export interface FakeStack {
  root: Context
  agent: Agent
  terminals: TerminalSessionService
  runtime: FakeRuntime
  /** The mounted fake sandbox, when `sandbox: true` was asked for. */
  sandbox: FakeSandbox | undefined
  policyFiber: Fiber
  backendFiber: Fiber
  dispose(): Promise<void>
}

/** What the fake stack mounts for sandboxing: the policy's config, and whether a fake `ctx.sandbox` exists. */
export interface FakeSandboxing {
  /** `dsh-sandbox-policy` config; default `danger-full-access` with the process cwd as the workspace. */
  policy?: { mode?: 'read-only' | 'workspace-write' | 'danger-full-access'; workspaceRoot?: string }
  /** Mount a {@link FakeSandbox}. */
  sandbox?: boolean
}

/** Mount the fake stack. */
export async function startFakeStack(config: ShellBackendConfigInput = {}, sandboxing: FakeSandboxing = {}): Promise<FakeStack> {
  const root = new Context()
  const fibers: Fiber[] = []
  let runtime: FakeRuntime | undefined
  let sandbox: FakeSandbox | undefined
  fibers.push(await root.plugin(agentPlugin))
  fibers.push(await root.plugin({ name: 'fake-subprocess', apply: (ctx: Context) => void (runtime = new FakeRuntime(ctx)) }))
  const policyFiber = await root.plugin(policyPlugin, { mode: 'danger-full-access', ...sandboxing.policy })
  fibers.push(policyFiber)
  if (sandboxing.sandbox) fibers.push(await root.plugin({ name: 'fake-sandbox', apply: (ctx: Context) => void (sandbox = new FakeSandbox(ctx)) }))
  fibers.push(await root.plugin(terminalPlugin))
  const backendFiber = await root.plugin(bashPlugin, config)
  fibers.push(backendFiber)
  const agent = await root.agents.create()
  return {
    root,
    agent,
    terminals: root.terminals,
    runtime: runtime as FakeRuntime,
    sandbox,
    policyFiber,
    backendFiber,
    dispose: async () => {
      await agent.dispose().catch(() => undefined)
      for (const fiber of fibers.reverse()) await fiber.dispose()
    },
  }
}
