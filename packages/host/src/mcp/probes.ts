import type { Context } from '@deepseek-ai/cordis'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Composition } from '../compose/load-config'

/** The liveness route: the server answers requests. */
export const LIVE_PATH = '/healthz'

/** The readiness route: a new client could open a session now. */
export const READY_PATH = '/readyz'

/** How long one readiness verdict is reused: an orchestrator probing every few seconds opens at most this often. */
export const READY_CACHE_MS = 10_000

/** Why the server is not ready, as a stable code (the probe is unauthenticated: no paths, no messages). */
export type NotReadyReason = 'SHUTTING_DOWN' | 'AT_CAPACITY' | 'NO_TERMINALS' | 'OPEN_FAILED'

/** A verdict: ready, or the reason it is not. */
export type Readiness = { readonly ready: true } | { readonly ready: false; readonly reason: NotReadyReason }

/** What the HTTP host tells the probes about itself. */
export interface ProbeFacts {
  /** The server is closing its sessions. */
  shuttingDown(): boolean
  /** No new MCP session may start (the session cap is reached). */
  full(): boolean
}

/**
 * `/readyz`'s check: the server accepts a new session, and a shell session really opens and closes
 * (the sandbox starts, the provider spawns), for an agent of the probe's own. Verdicts are cached
 * for {@link READY_CACHE_MS} and concurrent probes share one open, so probing costs one shell per
 * ten seconds at most.
 */
export class ReadinessProbe {
  #cached: { readonly at: number; readonly verdict: Readiness } | undefined
  #running: Promise<Readiness> | undefined

  constructor(
    private readonly composition: Pick<Composition, 'agents' | 'root'>,
    private readonly facts: ProbeFacts,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The current verdict: the host's own state first, then a (cached) trial open. */
  async check(): Promise<Readiness> {
    if (this.facts.shuttingDown()) return { ready: false, reason: 'SHUTTING_DOWN' }
    if (this.facts.full()) return { ready: false, reason: 'AT_CAPACITY' }
    const cached = this.#cached
    if (cached && this.now() - cached.at < READY_CACHE_MS) return cached.verdict
    this.#running ??= this.#trial().finally(() => {
      this.#running = undefined
    })
    return await this.#running
  }

  async #trial(): Promise<Readiness> {
    const verdict = await trialOpen(this.composition)
    this.#cached = { at: this.now(), verdict }
    return verdict
  }
}

/** Open a session (a shell where the composition has one) for a fresh agent and close it again; the agent's disposal leaves nothing behind. */
async function trialOpen(composition: Pick<Composition, 'agents' | 'root'>): Promise<Readiness> {
  const terminals = composition.root.get('terminals') as Context['terminals'] | undefined
  const types = terminals?.listBackends() ?? []
  // The type a model opens by default; a composition without it is probed with its first backend.
  const type = types.includes('shell') ? 'shell' : types[0]
  if (!terminals || type === undefined) return { ready: false, reason: 'NO_TERMINALS' }
  const agent = await composition.agents.create()
  try {
    const opened = await terminals.spawn(agent, { type })
    await terminals.close(agent, opened.sessionId, 'readiness probe')
    return { ready: true }
  } catch {
    return { ready: false, reason: 'OPEN_FAILED' }
  } finally {
    await agent.dispose().catch(() => {})
  }
}

/** Answer a probe: 200 `ok` / `ready`, or 503 with the reason's code; `GET` and `HEAD` only. */
export function sendProbe(req: IncomingMessage, res: ServerResponse, verdict: Readiness, okText: string): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' })
    res.end('405 method not allowed: probe with GET\n')
    return
  }
  const body = verdict.ready ? `${okText}\n` : `not ready: ${verdict.reason}\n`
  res.writeHead(verdict.ready ? 200 : 503, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' })
  res.end(req.method === 'HEAD' ? undefined : body)
}
