import { Context, type Fiber } from '@deepseek-ai/cordis'
import * as agentPlugin from 'dsh-agent'
import { afterEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import * as toolsPlugin from 'dsh-tools'
import { defineTool, type ToolCallEvent, type ToolResult } from 'dsh-tools'

let fibers: Fiber[] = []

afterEach(async () => {
  for (const fiber of fibers.reverse()) await fiber.dispose()
  fibers = []
})

async function setup() {
  const root = new Context()
  fibers = [await root.plugin(agentPlugin), await root.plugin(toolsPlugin)]
  const agent = await root.agents.create()
  const order: string[] = []
  root.tools.register(
    defineTool({
      name: 'double',
      description: 'Double a number',
      parameters: z.strictObject({ n: z.number(), note: z.string().default('none') }),
      execute: ({ n }) => {
        order.push('execute')
        return String(n * 2)
      },
    }),
  )
  return { root, agent, order }
}

describe('ctx.tools.observe', () => {
  it('hands the same call to beforeCall (awaited, validated arguments) and afterCall (final result, duration)', async () => {
    const { root, agent, order } = await setup()
    const seen: { before?: ToolCallEvent; after?: ToolCallEvent; result?: ToolResult; durationMs?: number } = {}
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    root.tools.observe({
      beforeCall: async (call) => {
        seen.before = call
        order.push('before')
        await gate
      },
      afterCall: (call, result, durationMs) => {
        order.push('after')
        Object.assign(seen, { after: call, result, durationMs })
      },
    })
    const pending = root.tools.execute({ callId: 'c1', name: 'double', arguments: '{"n": 21}', agent })
    await new Promise((resolve) => setImmediate(resolve))
    // The tool waits for beforeCall.
    expect(order).toEqual(['before'])
    release()
    const result = await pending
    expect(order).toEqual(['before', 'execute', 'after'])
    expect(seen.before).toBe(seen.after)
    expect(seen.after).toMatchObject({ callId: 'c1', name: 'double', agent, arguments: { n: 21, note: 'none' }, valid: true })
    expect(seen.result).toBe(result)
    expect(seen.durationMs).toBeGreaterThanOrEqual(0)
  })

  it('reports unknown tools and invalid arguments to afterCall only, with what the caller sent', async () => {
    const { root, agent } = await setup()
    const events: string[] = []
    root.tools.observe({
      beforeCall: (call) => void events.push(`before ${call.name}`),
      afterCall: (call, result) => void events.push(`after ${call.name} ${JSON.stringify(call.arguments)} ${call.valid} ${result.error?.code}`),
    })
    await root.tools.execute({ callId: 'c1', name: 'nope', arguments: { x: 1 }, agent })
    await root.tools.execute({ callId: 'c2', name: 'double', arguments: { n: 'two' }, agent })
    expect(events).toEqual(['after nope {"x":1} false UNKNOWN_TOOL', 'after double {"n":"two"} false INVALID_ARGUMENTS'])
  })

  it('never lets a throwing or rejecting observer change or fail a call, and stops at its disposer', async () => {
    const { root, agent } = await setup()
    let calls = 0
    const dispose = root.tools.observe({
      beforeCall: () => Promise.reject(new Error('observer broke')),
      afterCall: () => {
        calls++
        throw new Error('observer broke again')
      },
    })
    const first = await root.tools.execute({ callId: 'c1', name: 'double', arguments: { n: 1 }, agent })
    expect(first).toMatchObject({ isError: false, content: [{ type: 'text', text: '2' }] })
    expect(calls).toBe(1)
    await dispose()
    await root.tools.execute({ callId: 'c2', name: 'double', arguments: { n: 1 }, agent })
    expect(calls).toBe(1)
  })

  it('ends with the plugin that registered the observer', async () => {
    const { root, agent } = await setup()
    let calls = 0
    const fiber = await root.plugin({
      name: 'watcher',
      inject: ['tools'],
      apply: (ctx: Context) => {
        ctx.tools.observe({ afterCall: () => void calls++ })
      },
    })
    await root.tools.execute({ callId: 'c1', name: 'double', arguments: { n: 1 }, agent })
    await fiber.dispose()
    await root.tools.execute({ callId: 'c2', name: 'double', arguments: { n: 1 }, agent })
    expect(calls).toBe(1)
  })
})
