import { type Context, Service } from '@deepseek-ai/cordis'
import { Agent } from './agent'

declare module '@deepseek-ai/cordis' {
  interface Context {
    /** Registry of live agents (plugin `dsh-agent`). */
    agents: AgentService
  }
}

/** Options for {@link AgentService.create}. */
export interface CreateAgentOptions {
  /** Stable id; defaults to `agent-<n>`. Must be unique among live agents. */
  id?: string
}

/** Error raised for agent registry misuse; `code` is stable for routing. */
export class AgentError extends Error {
  constructor(
    /** `DUPLICATE_AGENT` for a taken id, `AGENT_NOT_LIVE` for an ended agent. */
    readonly code: 'DUPLICATE_AGENT' | 'AGENT_NOT_LIVE',
    message: string,
  ) {
    super(message)
    this.name = 'AgentError'
  }
}

/**
 * `ctx.agents`: creates agents with their own scopes and tracks the live ones by id.
 * Hosts create one agent per client connection; tests create them freely.
 */
export class AgentService extends Service {
  private readonly agents = new Map<string, Agent>()
  private counter = 0

  constructor(ctx: Context) {
    super(ctx, 'agents')
    ctx.effect(
      () => () => {
        const agents = [...this.agents.values()]
        this.agents.clear()
        return Promise.allSettled(agents.map((agent) => agent.dispose())).then(() => undefined)
      },
      'agents: end every agent',
    )
  }

  /** Create, register and return a new agent whose scope is a child of this service's context. */
  async create(options: CreateAgentOptions = {}): Promise<Agent> {
    const id = options.id ?? `agent-${++this.counter}`
    if (this.agents.has(id)) throw new AgentError('DUPLICATE_AGENT', `agent id "${id}" is already in use`)
    const fiber = this.ctx.plugin({ name: `agent:${id}`, apply: () => {} })
    await fiber
    const agent = new Agent(id, fiber)
    this.register(agent)
    return agent
  }

  /** Track an agent by id until it ends; refuses a taken id or an agent that already ended. */
  register(agent: Agent): () => void {
    if (!agent.live) throw new AgentError('AGENT_NOT_LIVE', `agent ${agent.id} has already ended`)
    const existing = this.agents.get(agent.id)
    if (existing && existing !== agent) throw new AgentError('DUPLICATE_AGENT', `agent id "${agent.id}" is already in use`)
    this.agents.set(agent.id, agent)
    const forget = () => {
      if (this.agents.get(agent.id) === agent) this.agents.delete(agent.id)
    }
    agent.own(forget, 'agents: forget')
    return forget
  }

  /** The live agent registered under `id`, if any. */
  get(id: string): Agent | undefined {
    const agent = this.agents.get(id)
    return agent?.live ? agent : undefined
  }

  /** True only for the exact registered, live agent object (not a look-alike with its id). */
  isLive(agent: Agent): boolean {
    return this.agents.get(agent.id) === agent && agent.live
  }

  /**
   * `isLive` as a plain function, for a service that asks on every call: looked up once, it skips the
   * Cordis wrapping a call through `ctx.agents` costs each time.
   */
  liveness(): (agent: Agent) => boolean {
    const agents = this.agents
    return (agent) => agents.get(agent.id) === agent && agent.live
  }

  /** Every live agent, in creation order. */
  list(): Agent[] {
    return [...this.agents.values()].filter((agent) => agent.live)
  }
}
