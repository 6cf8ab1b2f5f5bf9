import { Context, type Fiber, type Plugin } from '@deepseek-ai/cordis'
import * as agentPlugin from 'dsh-agent'
import type { Agent } from 'dsh-agent'
import { LinePattern } from 'dsh-basics'
import * as sandboxPlugin from 'dsh-sandbox-local'
import * as policyPlugin from 'dsh-sandbox-policy'
import * as localPlugin from 'dsh-subprocess-local'
import { LocalSubprocessRuntime, type LocalSubprocessRuntimeOptions } from 'dsh-subprocess-local/internal'
import * as terminalPlugin from 'dsh-terminal'
import type { TerminalSendHandle, TerminalSendRequest, TerminalSendResult, TerminalSessionId, TerminalSessionService, TerminalSpawnResult } from 'dsh-terminal'
import * as bashPlugin from '../../src/index'
import type { ShellBackendConfigInput } from '../../src/index'

/**
 * Generous silence and timeout for real-PTY tests: an exact tier that fails to prove readiness then
 * shows up as a wrong wait reason instead of a lucky pass by silence.
 */
export const PATIENT: ShellBackendConfigInput = { idleSilenceMs: 20_000, timeoutMs: 25_000, disposeGraceMs: 1_000 }

/** Options of a real stack beyond the backend's config: sandboxing and the registry's bounds. */
export interface StackSandbox {
  /** `dsh-sandbox-policy` config; default `danger-full-access` (the shell starts unconfined). */
  readonly policy?: {
    mode?: 'read-only' | 'workspace-write' | 'danger-full-access'
    workspaceRoot?: string
    network?: 'none' | 'host' | 'allowlist'
    allowedHosts?: string[]
  }
  /** `dsh-sandbox-local` config, or omitted to mount no `ctx.sandbox`. */
  readonly sandbox?: { bwrapPath?: string; legacyTiocsti?: 'warn' | 'refuse'; egressAddresses?: Record<string, string>; privateHome?: boolean }
  /** The subprocess provider's runtime options (e.g. an inspector without proofs, as on macOS); the plugin's own when omitted. */
  readonly subprocess?: LocalSubprocessRuntimeOptions
  /**
   * Another provider of `ctx.subprocess`, mounted instead of dsh-subprocess-local (e.g.
   * dsh-subprocess-remote, which runs the terminals in a session host).
   */
  readonly provider?: { readonly plugin: Plugin; readonly config?: unknown }
  /** `dsh-terminal` config (its per-agent bounds); defaults when omitted. */
  readonly terminals?: { maxSessionsPerAgent?: number; maxTextBytes?: number; humanActiveMs?: number; detachedTtlMs?: number }
}

/** The real composition (agents, node-pty provider, sandbox policy and provider, registry, this backend) and one agent. */
export interface Stack {
  readonly root: Context
  readonly agent: Agent
  readonly terminals: TerminalSessionService
  /** Open a `shell` session owned by the stack's agent (on a named target of the provider with `target`). */
  open(request?: { name?: string; cwd?: string; target?: string }, signal?: AbortSignal): Promise<TerminalSpawnResult>
  /** Start a send (Enter appended unless `submit: false`). */
  send(id: TerminalSessionId, text: string, options?: SendOptions): TerminalSendHandle
  /** Send and wait for the result. */
  run(id: TerminalSessionId, text: string, options?: Omit<SendOptions, 'signal'>): Promise<TerminalSendResult>
  /** Press named keys (or type characters) in one send and wait for its result. */
  press(id: TerminalSessionId, ...keys: string[]): Promise<TerminalSendResult>
  /** End the agent (closing its sessions) and unload every plugin. */
  dispose(): Promise<void>
}

/** What a test may set on one send: Enter, cancellation, its own timeout and silence, and a pattern to wait for. */
export interface SendOptions {
  submit?: boolean
  signal?: AbortSignal
  timeoutMs?: number
  idleMs?: number
  /** A pattern's source (compiled here) or a compiled pattern. */
  waitFor?: string | LinePattern
}

/** Mount the real stack with this backend's config; unconfined unless `sandboxing` says otherwise. */
export async function startStack(config: ShellBackendConfigInput = PATIENT, sandboxing: StackSandbox = {}): Promise<Stack> {
  const root = new Context()
  const fibers: Fiber[] = []
  fibers.push(await root.plugin(agentPlugin))
  if (sandboxing.provider) fibers.push(await root.plugin(sandboxing.provider.plugin, sandboxing.provider.config))
  else if (sandboxing.subprocess) {
    const options = sandboxing.subprocess
    const withOptions = {
      name: 'dsh-subprocess-local-with-options',
      apply: (ctx: Context) => void new LocalSubprocessRuntime(ctx, localPlugin.Config.parse({}), options),
    }
    fibers.push(await root.plugin(withOptions))
  } else fibers.push(await root.plugin(localPlugin))
  fibers.push(await root.plugin(policyPlugin, { mode: 'danger-full-access', ...sandboxing.policy }))
  if (sandboxing.sandbox) fibers.push(await root.plugin(sandboxPlugin, sandboxing.sandbox))
  fibers.push(await root.plugin(terminalPlugin, sandboxing.terminals))
  fibers.push(await root.plugin(bashPlugin, config))
  const agent = await root.agents.create()
  const terminals = root.terminals
  const send: Stack['send'] = (id, text, options = {}) => {
    const request: TerminalSendRequest = { text, submit: options.submit ?? true, signal: options.signal }
    if (options.timeoutMs !== undefined) request.timeoutMs = options.timeoutMs
    if (options.idleMs !== undefined) request.idleMs = options.idleMs
    if (options.waitFor !== undefined) request.waitFor = typeof options.waitFor === 'string' ? LinePattern.compile(options.waitFor) : options.waitFor
    return terminals.startSend(agent, id, request)
  }
  return {
    root,
    agent,
    terminals,
    open: (request = {}, signal) => terminals.spawn(agent, { type: 'shell', ...request }, signal),
    send,
    run: async (id, text, options) => settle(send(id, text, options)),
    press: async (id, ...keys) => settle(terminals.startSend(agent, id, { kind: 'keys', keys })),
    dispose: async () => {
      await agent.dispose().catch(() => undefined)
      for (const fiber of fibers.reverse()) await fiber.dispose()
    },
  }
}

/** The send's result, once it also released the session. */
async function settle(handle: TerminalSendHandle): Promise<TerminalSendResult> {
  const result = await handle.done
  await handle.released
  return result
}

/** Every integer on lines of `text` that look like `<label>=<n>`, by label. */
export function labelledNumbers(text: string): Record<string, number> {
  const found: Record<string, number> = {}
  for (const match of text.matchAll(/([A-Za-z_]+)=(\d+)/g)) found[match[1] as string] = Number(match[2])
  return found
}
