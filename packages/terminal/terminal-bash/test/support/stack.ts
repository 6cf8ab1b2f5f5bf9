import { readdirSync, readFileSync } from 'node:fs'
import { Context, type Fiber } from '@deepseek-ai/cordis'
import * as agentPlugin from 'dsh-agent'
import type { Agent } from 'dsh-agent'
import * as sandboxPlugin from 'dsh-sandbox-local'
import * as policyPlugin from 'dsh-sandbox-policy'
import * as localPlugin from 'dsh-subprocess-local'
import * as terminalPlugin from 'dsh-terminal'
import type { TerminalSendHandle, TerminalSendResult, TerminalSessionId, TerminalSessionService, TerminalSpawnResult } from 'dsh-terminal'
import * as bashPlugin from '../../src/index'
import type { ShellBackendConfigInput } from '../../src/index'

/**
 * Generous silence and timeout for real-PTY tests: an exact tier that fails to prove readiness then
 * shows up as a wrong wait reason instead of a lucky pass by silence.
 */
export const PATIENT: ShellBackendConfigInput = { idleSilenceMs: 20_000, timeoutMs: 25_000, disposeGraceMs: 1_000 }

/** Sandbox configuration of a real stack. */
export interface StackSandbox {
  /** `dsh-sandbox-policy` config; default `danger-full-access` (the shell starts unconfined). */
  readonly policy?: { mode?: 'read-only' | 'workspace-write' | 'danger-full-access'; workspaceRoot?: string }
  /** `dsh-sandbox-local` config, or omitted to mount no `ctx.sandbox`. */
  readonly sandbox?: { bwrapPath?: string; legacyTiocsti?: 'warn' | 'refuse' }
}

/** The real composition (agents, node-pty provider, sandbox policy and provider, registry, this backend) and one agent. */
export interface Stack {
  readonly root: Context
  readonly agent: Agent
  readonly terminals: TerminalSessionService
  /** Open a `shell` session owned by the stack's agent. */
  open(request?: { name?: string; cwd?: string }, signal?: AbortSignal): Promise<TerminalSpawnResult>
  /** Start a send (Enter appended unless `submit: false`). */
  send(id: TerminalSessionId, text: string, options?: { submit?: boolean; signal?: AbortSignal }): TerminalSendHandle
  /** Send and wait for the result. */
  run(id: TerminalSessionId, text: string, options?: { submit?: boolean }): Promise<TerminalSendResult>
  /** End the agent (closing its sessions) and unload every plugin. */
  dispose(): Promise<void>
}

/** Mount the real stack with this backend's config; unconfined unless `sandboxing` says otherwise. */
export async function startStack(config: ShellBackendConfigInput = PATIENT, sandboxing: StackSandbox = {}): Promise<Stack> {
  const root = new Context()
  const fibers: Fiber[] = []
  fibers.push(await root.plugin(agentPlugin))
  fibers.push(await root.plugin(localPlugin))
  fibers.push(await root.plugin(policyPlugin, { mode: 'danger-full-access', ...sandboxing.policy }))
  if (sandboxing.sandbox) fibers.push(await root.plugin(sandboxPlugin, sandboxing.sandbox))
  fibers.push(await root.plugin(terminalPlugin))
  fibers.push(await root.plugin(bashPlugin, config))
  const agent = await root.agents.create()
  const terminals = root.terminals
  const send: Stack['send'] = (id, text, options = {}) =>
    terminals.startSend(agent, id, { text, submit: options.submit ?? true, signal: options.signal })
  return {
    root,
    agent,
    terminals,
    open: (request = {}, signal) => terminals.spawn(agent, { type: 'shell', ...request }, signal),
    send,
    run: async (id, text, options) => {
      const handle = send(id, text, options)
      const result = await handle.done
      await handle.released
      return result
    },
    dispose: async () => {
      await agent.dispose().catch(() => undefined)
      for (const fiber of fibers.reverse()) await fiber.dispose()
    },
  }
}

/** True while `pid` exists and is not a zombie (read from /proc). */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
    return state !== 'Z' && state !== 'X'
  } catch {
    return false
  }
}

/** A process identity that survives pid reuse: pid plus its start time (field 22 of its stat). */
export interface ProcessIdentity {
  readonly pid: number
  readonly started: string
}

/** The identity of a live process, or undefined. */
export function identify(pid: number): ProcessIdentity | undefined {
  const fields = statFields(pid)
  return fields && fields[0] !== 'Z' && fields[0] !== 'X' ? { pid, started: fields[19] as string } : undefined
}

/** True while exactly this process (same pid and start time) exists and is not a zombie. */
export function stillRunning(identity: ProcessIdentity): boolean {
  return identify(identity.pid)?.started === identity.started
}

/** Every live descendant of `pid` (from the host's /proc), parents before children. */
export function descendants(pid: number): ProcessIdentity[] {
  const found: ProcessIdentity[] = []
  const queue = [pid]
  while (queue.length > 0) {
    const parent = queue.shift() as number
    let children: number[] = []
    try {
      children = readFileSync(`/proc/${parent}/task/${parent}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)
    } catch {
      // the parent is gone
    }
    for (const child of children) {
      const identity = identify(child)
      if (identity) found.push(identity)
      queue.push(child)
    }
  }
  return found
}

/** The command name (`comm`) of a process, or undefined. */
export function processName(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim()
  } catch {
    return undefined
  }
}

function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  } catch {
    return undefined
  }
}

/** Every integer on lines of `text` that look like `<label>=<n>`, by label. */
export function labelledNumbers(text: string): Record<string, number> {
  const found: Record<string, number> = {}
  for (const match of text.matchAll(/([A-Za-z_]+)=(\d+)/g)) found[match[1] as string] = Number(match[2])
  return found
}

/** The foreground process group of the terminal `shellPid` controls (from /proc), or undefined. */
export function foregroundGroup(shellPid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${shellPid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return Number(fields[5])
  } catch {
    return undefined
  }
}

/** Wait (polling a condition, never a fixed sleep) until `check` holds; fails after `limitMs`. */
export async function until(check: () => boolean, what: string, limitMs = 10_000): Promise<void> {
  const deadline = Date.now() + limitMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

/** Pids of live processes running `argv` (argv[0] compared by basename: the provider resolves it on PATH). */
export function processesRunning(argv: readonly string[]): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const running = commandLine(Number(entry))
    if (running && matches(running, argv) && isAlive(Number(entry))) found.push(Number(entry))
  }
  return found
}

/** The argv of a live process, or undefined. */
export function commandLine(pid: number): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
    return text === '' ? undefined : text.replace(/\0$/, '').split('\0')
  } catch {
    return undefined
  }
}

function matches(running: readonly string[], argv: readonly string[]): boolean {
  if (running.length !== argv.length) return false
  const base = (path: string) => path.slice(path.lastIndexOf('/') + 1)
  return base(running[0] as string) === base(argv[0] as string) && running.slice(1).every((arg, index) => arg === argv[index + 1])
}
