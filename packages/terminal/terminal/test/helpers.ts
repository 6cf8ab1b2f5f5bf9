import { Context, type Fiber } from '@deepseek-ai/cordis'
import * as agentPlugin from 'dsh-agent'
import type { Agent } from 'dsh-agent'
import * as terminalPlugin from 'dsh-terminal'
import { Deferred } from 'dsh-testkit'
import type { z } from 'zod'
import type {
  TerminalBackend,
  TerminalBackendSession,
  TerminalBackendSpawnSpec,
  TerminalScreen,
  TerminalReadRequest,
  TerminalReadResult,
  TerminalSendOperation,
  TerminalSendRead,
  TerminalSendRequest,
  TerminalSendResult,
  TerminalSessionService,
  TerminalSessionStatus,
  TerminalSignal,
  TerminalSignalResult,
} from 'dsh-terminal'

/** Let every queued microtask and immediate run (no timers, no wall-clock waits). */
export async function flush(rounds = 3): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve))
}

/** Settle a promise into a plain record so assertions never print live objects. */
export async function outcome<T>(promise: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  try {
    return { ok: true, value: await promise }
  } catch (error) {
    return { ok: false, error }
  }
}

/** Plain description of a thrown value. */
export function summary(error: unknown): { name?: string; code?: string; message: string } {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code
    return { name: error.name, ...(typeof code === 'string' ? { code } : {}), message: error.message }
  }
  return { message: String(error) }
}

/** A controllable send: the test settles `done` and, optionally, `released`. */
/** What a synchronous call did: 'allowed', or the summary of what it threw. */
export function thrown(call: () => unknown): 'allowed' | ReturnType<typeof summary> {
  try {
    call()
    return 'allowed'
  } catch (error) {
    return summary(error)
  }
}

export class StubSend implements TerminalSendOperation {
  readonly result = new Deferred<TerminalSendResult>()
  readonly done = this.result.promise
  released?: Promise<void>
  cancelled = 0
  constructor(
    readonly request: TerminalSendRequest,
    hold?: Promise<void>,
  ) {
    if (hold) this.released = hold
  }
  readOutput(): TerminalSendRead {
    return { delta: `out:${this.request.text}`, truncated: false }
  }
  cancel(): boolean {
    this.cancelled++
    return true
  }
  finish(viewport = 'ok'): void {
    this.result.resolve({ viewport, waitReason: 'stdin_read', sessionStatus: { kind: 'running' }, truncated: false, exitCode: 0 })
  }
}

/** A controllable backend session. Closes resolve at once unless `closeGate` queues them. */
export class StubSession implements TerminalBackendSession {
  readonly motd: string
  readonly pid?: number
  readonly sends: StubSend[] = []
  readonly closes: string[] = []
  readonly signals: TerminalSignal[] = []
  readonly reads: TerminalReadRequest[] = []
  /** When set, each close waits for the next queued deferred. */
  closeGate: Deferred[] | undefined
  /** When set, startSend's operations keep the reservation until this settles. */
  hold: Promise<void> | undefined
  state: TerminalSessionStatus = { kind: 'running' }
  /** Set to give the session a screen. */
  screen?: () => Promise<TerminalScreen>

  constructor(readonly spec: TerminalBackendSpawnSpec) {
    this.motd = `welcome to ${spec.sessionId}`
    this.pid = 1000 + Number(spec.sessionId.slice(4))
  }
  startSend(request: TerminalSendRequest): TerminalSendOperation {
    const send = new StubSend(request, this.hold)
    this.sends.push(send)
    return send
  }
  read(request: TerminalReadRequest): TerminalReadResult {
    this.reads.push(request)
    return { text: 'line', totalLines: 1, lineBegin: 1, lineEnd: 1, oldestLine: 1, truncated: false }
  }
  async signal(signal: TerminalSignal): Promise<TerminalSignalResult> {
    this.signals.push(signal)
    return { delivered: true, targetPgid: 4242 }
  }
  status(): TerminalSessionStatus {
    return this.state
  }
  async close(reason: string): Promise<void> {
    this.closes.push(reason)
    const gate = new Deferred()
    if (!this.closeGate) return
    this.closeGate.push(gate)
    await gate.promise
  }
}

/** One backend.spawn call, held until the test settles it. */
export interface SpawnCall {
  spec: TerminalBackendSpawnSpec
  result: Deferred<TerminalBackendSession>
  aborted: () => boolean
  session: () => StubSession
}

/**
 * A backend whose spawns are either immediate (`auto`) or held as {@link SpawnCall}s.
 * Every created session is kept for inspection.
 */
export class StubBackend implements TerminalBackend {
  readonly calls: SpawnCall[] = []
  readonly sessions: StubSession[] = []
  constructor(
    readonly type = 'shell',
    public auto = true,
  ) {}
  spawn(spec: TerminalBackendSpawnSpec): Promise<TerminalBackendSession> {
    const result = new Deferred<TerminalBackendSession>()
    let created: StubSession | undefined
    const call: SpawnCall = {
      spec,
      result,
      aborted: () => spec.signal.aborted,
      session: () => {
        created ??= new StubSession(spec)
        if (!this.sessions.includes(created)) this.sessions.push(created)
        return created
      },
    }
    this.calls.push(call)
    if (this.auto) result.resolve(call.session())
    return result.promise
  }
}

/** What a cordis.yml may give `dsh-terminal`. */
export type TerminalConfigInput = z.input<typeof terminalPlugin.Config>

/** A root with dsh-agent, dsh-terminal and a logger sink; `errors` collects logged errors. */
export interface Harness {
  root: Context
  terminals: TerminalSessionService
  errors: unknown[]
  terminalFiber: Fiber
  agent(id?: string): Promise<Agent>
  /** Mount a plugin that registers `backend` on its own scope; returns its fiber. */
  mountBackend(backend: TerminalBackend): Promise<Fiber>
}

/** Mount the stack; `config` is dsh-terminal's plugin config (defaults when omitted). */
export async function setup(config?: TerminalConfigInput): Promise<Harness> {
  const root = new Context()
  const errors: unknown[] = []
  root.logger.exporter({ export: (message) => void (message.type === 'error' && errors.push(...message.args)) })
  await root.plugin(agentPlugin)
  const terminalFiber = await root.plugin(terminalPlugin, config)
  await flush()
  const terminals = root.get('terminals') as TerminalSessionService
  if (!terminals) throw new Error('ctx.terminals did not come up')
  return {
    root,
    terminals,
    errors,
    terminalFiber,
    agent: (id) => root.agents.create(id === undefined ? {} : { id }),
    async mountBackend(backend) {
      const fiber = root.plugin({
        name: `backend-${backend.type}`,
        inject: ['terminals'],
        apply: (ctx: Context) => {
          ctx.terminals.registerBackend(backend)
        },
      })
      await fiber
      return fiber
    },
  }
}
