import { type Context as CordisContext, Context, Service } from '@deepseek-ai/cordis'
import { describe, expect, it } from 'vitest'
import * as agentPlugin from 'dsh-agent'
import { Agent, directCalls } from 'dsh-agent'

declare module '@deepseek-ai/cordis' {
  interface Context {
    directCallsProbe: Probe
  }
}

/** A service whose method registers an effect for whoever called it, as `ctx.terminals.registerBackend` does. */
class Probe extends Service {
  readonly held = new Set<string>()
  constructor(ctx: CordisContext, direct: boolean) {
    super(ctx, 'directCallsProbe')
    if (direct) directCalls(this)
  }
  hold(name: string): void {
    this.ctx.effect(() => {
      this.held.add(name)
      return () => this.held.delete(name)
    }, `hold ${name}`)
  }
  callerContext(): CordisContext {
    return this.ctx
  }
}

describe('directCalls', () => {
  it.each([true, false])('keeps `this.ctx` the caller context: an effect made through it ends with the calling plugin (direct: %s)', async (direct) => {
    const root = new Context()
    const provider = await root.plugin({ name: 'provider', apply: (ctx: CordisContext) => void new Probe(ctx, direct) })
    let callerCtx: CordisContext | undefined
    const caller = await root.plugin({
      name: 'caller',
      inject: ['directCallsProbe'],
      apply: (ctx: CordisContext) => {
        callerCtx = ctx
        ctx.directCallsProbe.hold('from-caller')
      },
    })
    const probe = root.directCallsProbe
    expect([...probe.held]).toEqual(['from-caller'])
    expect(callerCtx!.directCallsProbe.callerContext().fiber).toBe(callerCtx!.fiber)
    await caller.dispose()
    expect([...probe.held]).toEqual([])
    await provider.dispose()
  })

  it('hands out the method itself: no wrapper is built per call', async () => {
    const root = new Context()
    await root.plugin({ name: 'direct', apply: (ctx: CordisContext) => void new Probe(ctx, true) })
    expect(root.directCallsProbe.hold).toBe(root.directCallsProbe.hold)
    expect(root.directCallsProbe.hold).toBe(Probe.prototype.hold)
  })

  it('a service without it wraps each method per access (the cost it removes)', async () => {
    const root = new Context()
    await root.plugin({ name: 'shadowed', apply: (ctx: CordisContext) => void new Probe(ctx, false) })
    expect(root.directCallsProbe.hold).not.toBe(root.directCallsProbe.hold)
  })
})

describe('AgentService.liveness', () => {
  it('answers as isLive does: the exact live agent only, not a look-alike, not after it ended', async () => {
    const root = new Context()
    await root.plugin(agentPlugin)
    const isLive = root.agents.liveness()
    const agent = await root.agents.create({ id: 'same' })
    expect(isLive(agent)).toBe(true)
    const fiber = root.plugin({ name: 'look-alike', apply: () => {} })
    await fiber
    expect(isLive(new Agent('same', fiber))).toBe(false)
    await agent.dispose()
    expect(isLive(agent)).toBe(false)
    expect(root.agents.isLive(agent)).toBe(false)
  })
})
