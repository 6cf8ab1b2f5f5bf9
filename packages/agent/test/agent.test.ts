import { Context, type Fiber } from '@deepseek-ai/cordis'
import { afterEach, describe, expect, it } from 'vitest'
import * as agentPlugin from 'dsh-agent'
import { Agent, AgentDisposeError, AgentError } from 'dsh-agent'

async function setup() {
  const root = new Context()
  plugin = await root.plugin(agentPlugin)
  return root
}

let root: Context
let plugin: Fiber | undefined

describe('dsh-agent', () => {
  afterEach(async () => {
    await plugin?.dispose()
    plugin = undefined
  })

  it('creates agents with stable ids and tracks them', async () => {
    root = await setup()
    const first = await root.agents.create()
    const named = await root.agents.create({ id: 'client-7' })
    expect(first.id).toBe('agent-1')
    expect(named.id).toBe('client-7')
    expect(root.agents.get('client-7')).toBe(named)
    expect(root.agents.list().map((agent) => agent.id)).toEqual(['agent-1', 'client-7'])
    expect(root.agents.isLive(named)).toBe(true)
  })

  it('refuses a duplicate id', async () => {
    root = await setup()
    await root.agents.create({ id: 'a' })
    await expect(root.agents.create({ id: 'a' })).rejects.toMatchObject({ code: 'DUPLICATE_AGENT' })
  })

  it('does not treat a look-alike with the same id as the live agent', async () => {
    root = await setup()
    const real = await root.agents.create({ id: 'same' })
    const fiber = root.plugin({ name: 'look-alike', apply: () => {} })
    await fiber
    const lookAlike = new Agent('same', fiber)
    expect(root.agents.isLive(real)).toBe(true)
    expect(root.agents.isLive(lookAlike)).toBe(false)
    expect(() => root.agents.register(lookAlike)).toThrow(AgentError)
  })

  it('runs owned cleanup on disposal, awaits it, and forgets the agent', async () => {
    root = await setup()
    const agent = await root.agents.create()
    const order: string[] = []
    agent.own(async () => {
      await new Promise((resolve) => setTimeout(resolve, 5))
      order.push('slow cleanup finished')
    })
    await agent.dispose()
    order.push('dispose resolved')
    expect(order).toEqual(['slow cleanup finished', 'dispose resolved'])
    expect(agent.live).toBe(false)
    expect(root.agents.get(agent.id)).toBeUndefined()
    expect(root.agents.isLive(agent)).toBe(false)
    await expect(agent.dispose()).resolves.toBeUndefined()
  })

  it('reports every failed cleanup together, after running the others', async () => {
    root = await setup()
    const agent = await root.agents.create()
    let ran = false
    agent.own(() => {
      throw new Error('first failed')
    })
    agent.own(() => {
      ran = true
    })
    agent.own(async () => {
      throw new Error('second failed')
    })
    const error = await agent.dispose().catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(AgentDisposeError)
    expect((error as AgentDisposeError).code).toBe('AGENT_CLEANUP_FAILED')
    expect((error as AgentDisposeError).errors.map((inner: Error) => inner.message).sort()).toEqual(['first failed', 'second failed'])
    expect(ran).toBe(true)
  })

  it('refuses to register an agent that already ended', async () => {
    root = await setup()
    const agent = await root.agents.create()
    await agent.dispose()
    expect(() => root.agents.register(agent)).toThrow(/already ended/)
  })

  it('ends every agent when the service unloads', async () => {
    root = await setup()
    const agent = await root.agents.create()
    let cleaned = false
    agent.own(() => {
      cleaned = true
    })
    await plugin?.dispose()
    expect(cleaned).toBe(true)
    expect(agent.live).toBe(false)
  })

  it('a disposer returned by own() runs the cleanup early and only once', async () => {
    root = await setup()
    const agent = await root.agents.create()
    let runs = 0
    const early = agent.own(() => {
      runs++
    })
    await early()
    await agent.dispose()
    expect(runs).toBe(1)
  })
})
