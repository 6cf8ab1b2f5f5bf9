import type { Context } from '@deepseek-ai/cordis'
import type { AgentService } from 'dsh-agent'
import { TERMINAL_WAIT_REASONS } from 'dsh-terminal'
import type { ToolResult, ToolService } from 'dsh-tools'
import type { EgressRefusal } from 'dsh-sandbox-local'
import { Counter, Gauge, Histogram, Registry } from 'prom-client'
import { HUMAN_EVENT, HUMAN_EVENT_KINDS, type HumanEvent } from '../human/events'

/** Error codes counted as sandbox refusals: the sandbox could not confine, or the policy refused a directory or mode. */
export const SANDBOX_REFUSAL_CODES: readonly string[] = Object.freeze([
  'SANDBOX_UNAVAILABLE',
  'SANDBOX_REQUIRED',
  'SANDBOX_INVALID_ARGV',
  'CWD_OUTSIDE_WORKSPACE',
  'MODE_CHANGE_VETOED',
])

/** Send latency buckets in seconds: a prompt round trip (ms) up to the longest allowed send (10 min). */
const SEND_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 600]

/** Job statuses, always exported (0 when none), so a dashboard sees every series from the start. */
const JOB_STATUSES = ['running', 'completed', 'failed', 'killed'] as const

/** What the composition offers the collectors; every service but tools is optional. */
type Sources = Pick<Context, 'get' | 'on'>

/**
 * The Prometheus metrics of one host: a registry of its own (never prom-client's global one, so two
 * hosts in one process keep apart), fed by the tool pipeline (`ctx.tools.observe`) and the gateway's
 * `dsh/human` events, with sessions and jobs counted when scraped. Labels come from fixed
 * vocabularies only (tool names, wait reasons, error codes); no text of a call or a session.
 */
export class HostMetrics {
  /** The registry `/metrics` renders. */
  readonly registry = new Registry()
  readonly #disposers: (() => unknown)[] = []

  private constructor() {}

  /** Start counting for `composition` until {@link HostMetrics.close}. */
  static attach(composition: { readonly root: Sources; readonly tools: ToolService }): HostMetrics {
    const metrics = new HostMetrics()
    const { registry } = metrics
    const registers = [registry]
    const tools = composition.tools
    const known = (name: string) => (tools.get(name) ? name : 'unknown')

    const calls = new Counter({
      name: 'dsh_terminal_tool_calls_total',
      help: 'Tool calls by tool and outcome (ok or error).',
      labelNames: ['tool', 'outcome'],
      registers,
    })
    const sends = new Counter({
      name: 'dsh_terminal_sends_total',
      help: 'terminal_send calls by why the wait ended (stdin_read, inferred_idle, timeout, session_exit, output_match), background for a send handed to a job, error for a refused or failed one.',
      labelNames: ['wait_reason'],
      registers,
    })
    const latency = new Histogram({
      name: 'dsh_terminal_send_duration_seconds',
      help: 'Duration of foreground terminal_send calls that settled, by wait reason.',
      labelNames: ['wait_reason'],
      buckets: SEND_BUCKETS,
      registers,
    })
    const bytes = new Counter({
      name: 'dsh_terminal_output_bytes_total',
      help: 'UTF-8 bytes of result text returned to agents, by tool.',
      labelNames: ['tool'],
      registers,
    })
    const refusals = new Counter({
      name: 'dsh_terminal_sandbox_refusals_total',
      help: 'Calls refused by the sandbox or its policy, by error code.',
      labelNames: ['code'],
      registers,
    })
    const egress = new Counter({
      name: 'dsh_terminal_egress_refusals_total',
      help: "Connections the allowlist network's proxy refused, by reason (NOT_ALLOWED, FORBIDDEN_ADDRESS, UNRESOLVED) and protocol (http, socks5).",
      labelNames: ['reason', 'protocol'],
      registers,
    })
    const human = new Counter({
      name: 'dsh_terminal_human_events_total',
      help: 'What people did with sessions (attach, takeover, release, secret_handoff, detach); takeover counts human takeovers.',
      labelNames: ['kind'],
      registers,
    })
    for (const reason of [...TERMINAL_WAIT_REASONS, 'background', 'error']) sends.labels(reason).inc(0)
    for (const kind of HUMAN_EVENT_KINDS) human.labels(kind).inc(0)

    const root = composition.root
    new Gauge({
      name: 'dsh_terminal_sessions',
      help: 'Terminal sessions of live agents: open (the shell runs), exited (listed, its shell ended), human_attached (a person watches or types).',
      labelNames: ['state'],
      registers,
      collect() {
        const counts = { open: 0, exited: 0, human_attached: 0 }
        const terminals = root.get('terminals') as Context['terminals'] | undefined
        for (const agent of agentsOf(root)) {
          for (const snapshot of listOrNothing(() => terminals?.list(agent) ?? [])) {
            if (snapshot.status.kind === 'running') counts.open++
            else counts.exited++
            if (snapshot.human !== undefined) counts.human_attached++
          }
        }
        for (const [state, count] of Object.entries(counts)) this.labels(state).set(count)
      },
    })
    new Gauge({
      name: 'dsh_terminal_jobs',
      help: 'Background jobs of live agents by status (finished ones as long as dsh-jobs keeps them).',
      labelNames: ['status'],
      registers,
      collect() {
        const counts = new Map<string, number>(JOB_STATUSES.map((status) => [status, 0]))
        const jobs = root.get('jobs') as Context['jobs'] | undefined
        for (const agent of agentsOf(root)) {
          for (const job of listOrNothing(() => jobs?.list(agent) ?? [])) counts.set(job.status, (counts.get(job.status) ?? 0) + 1)
        }
        for (const [status, count] of counts) this.labels(status).set(count)
      },
    })
    new Gauge({
      name: 'dsh_terminal_agents',
      help: 'Live agents (one per MCP client connection or HTTP session).',
      registers,
      collect() {
        this.set(agentsOf(root).length)
      },
    })

    const observe = (name: string, result: ToolResult, durationMs: number) => {
      const tool = known(name)
      calls.labels(tool, result.isError ? 'error' : 'ok').inc()
      bytes.labels(tool).inc(result.content.reduce((sum, block) => sum + Buffer.byteLength(block.text, 'utf8'), 0))
      const code = result.error?.code
      if (code !== undefined && SANDBOX_REFUSAL_CODES.includes(code)) refusals.labels(code).inc()
      if (name !== 'terminal_send') return
      const reason = sendReason(result)
      sends.labels(reason).inc()
      if ((TERMINAL_WAIT_REASONS as readonly string[]).includes(reason)) latency.labels(reason).observe(durationMs / 1000)
    }
    metrics.#disposers.push(tools.observe({ afterCall: (call, result, durationMs) => observe(call.name, result, durationMs) }))
    metrics.#disposers.push(
      root.on(HUMAN_EVENT, (event: HumanEvent) => {
        if ((HUMAN_EVENT_KINDS as readonly string[]).includes(event.kind)) human.labels(event.kind).inc()
      }),
      // No host name as a label: the refused hosts are the sandbox's log, not a metric's vocabulary.
      root.on('sandbox/egress-refused', (refusal: EgressRefusal) => {
        egress.labels(refusal.reason, refusal.protocol).inc()
      }),
    )
    return metrics
  }

  /** The exposition text (Prometheus text format 0.0.4). */
  text(): Promise<string> {
    return this.registry.metrics()
  }

  /** The content type of {@link HostMetrics.text}. */
  get contentType(): string {
    return this.registry.contentType
  }

  /** Stop counting (the registry keeps its last values). Idempotent. */
  close(): void {
    for (const dispose of this.#disposers.splice(0)) void Promise.resolve(dispose()).catch(() => undefined)
  }
}

/** The wait reason label of one terminal_send result. */
function sendReason(result: ToolResult): string {
  if (result.isError) return 'error'
  const meta = result.meta ?? {}
  if (meta.background === true) return 'background'
  const reason = meta.waitReason
  return typeof reason === 'string' && (TERMINAL_WAIT_REASONS as readonly string[]).includes(reason) ? reason : 'error'
}

function agentsOf(root: Sources): ReturnType<AgentService['list']> {
  return (root.get('agents') as AgentService | undefined)?.list() ?? []
}

/** A list that may throw because its agent ended meanwhile: nothing then. */
function listOrNothing<T>(list: () => readonly T[]): readonly T[] {
  try {
    return list()
  } catch {
    return []
  }
}
