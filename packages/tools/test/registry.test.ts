import { Context, type Fiber } from '@deepseek-ai/cordis'
import { afterEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import * as toolsPlugin from 'dsh-tools'
import { defineTool, ToolError } from 'dsh-tools'

const make = (name: string) =>
  defineTool({ name, description: `the ${name} tool`, requiresAgent: false, parameters: z.object({ x: z.string().describe('an x') }), execute: () => name })

let fibers: Fiber[] = []

async function setup() {
  const root = new Context()
  fibers = [await root.plugin(toolsPlugin)]
  return root
}

function codeOf(action: () => unknown): string | undefined {
  try {
    action()
  } catch (error) {
    return error instanceof ToolError ? error.code : `not a ToolError: ${String(error)}`
  }
  return undefined
}

describe('ctx.tools registry', () => {
  afterEach(async () => {
    for (const fiber of fibers.reverse()) await fiber.dispose()
    fibers = []
  })

  it('lists name, description and JSON Schema of each tool, sorted by name', async () => {
    const root = await setup()
    root.tools.register(make('zeta'))
    root.tools.register(make('alpha'))
    expect(root.tools.list()).toEqual([
      {
        name: 'alpha',
        description: 'the alpha tool',
        inputSchema: { type: 'object', properties: { x: { type: 'string', description: 'an x' } }, required: ['x'] },
      },
      expect.objectContaining({ name: 'zeta', description: 'the zeta tool' }),
    ])
    expect(root.tools.get('alpha')?.name).toBe('alpha')
    expect(root.tools.get('missing')).toBeUndefined()
  })

  it('register returns a disposer that removes the tool', async () => {
    const root = await setup()
    const dispose = root.tools.register(make('temp'))
    expect(root.tools.list().map((tool) => tool.name)).toEqual(['temp'])
    await dispose()
    expect(root.tools.list()).toEqual([])
    const result = await root.tools.execute({ callId: 'c', name: 'temp', arguments: { x: '1' } })
    expect(result.error?.code).toBe('UNKNOWN_TOOL')
    await dispose()
  })

  it("a plugin's tools and guidance vanish when that plugin unloads, and only those", async () => {
    const root = await setup()
    root.tools.register(make('host_tool'))
    const family = await root.plugin({
      name: 'family',
      inject: ['tools'],
      apply: (ctx: Context) => {
        ctx.tools.register(make('family_a'))
        ctx.tools.register(make('family_b'))
        ctx.tools.registerGuidance({ id: 'family', title: 'Family', text: 'Use the family tools.' })
      },
    })
    expect(root.tools.list().map((tool) => tool.name)).toEqual(['family_a', 'family_b', 'host_tool'])
    expect(root.tools.renderGuidance()).toBe('## Family\nUse the family tools.')
    const effects = family.getEffects().map((effect) => effect.label)
    expect(effects).toContain('tools.register("family_a")')
    await family.dispose()
    expect(root.tools.list().map((tool) => tool.name)).toEqual(['host_tool'])
    expect(root.tools.renderGuidance()).toBe('')
  })

  it('a consumer plugin deactivates with dsh-tools and re-registers when it returns', async () => {
    const root = new Context()
    const tools = await root.plugin(toolsPlugin)
    let applied = 0
    await root.plugin({
      name: 'consumer',
      inject: ['tools'],
      apply: (ctx: Context) => {
        applied++
        ctx.tools.register(make('consumer_tool'))
      },
    })
    await tools.dispose()
    expect(root.get('tools')).toBeUndefined()
    const again = await root.plugin(toolsPlugin)
    fibers = [again]
    await again.await()
    expect(applied).toBe(2)
    expect(root.tools.list().map((tool) => tool.name)).toEqual(['consumer_tool'])
  })

  it('refuses a duplicate name until the first registration ends', async () => {
    const root = await setup()
    const first = root.tools.register(make('dup'))
    expect(codeOf(() => root.tools.register(make('dup')))).toBe('DUPLICATE_TOOL')
    const failing = root.plugin({ name: 'clash', inject: ['tools'], apply: (ctx: Context) => void ctx.tools.register(make('dup')) })
    await expect(failing).rejects.toMatchObject({ code: 'DUPLICATE_TOOL' })
    await first()
    expect(codeOf(() => root.tools.register(make('dup')))).toBeUndefined()
  })

  it('refuses something that was not made by defineTool', async () => {
    const root = await setup()
    const raw = { name: 'raw', description: 'raw', parameters: z.object({}), execute: () => 'x' }
    expect(codeOf(() => root.tools.register(raw as never))).toBe('INVALID_TOOL')
  })

  it('renders guidance in a stable order, whatever the registration order', async () => {
    const sections = [
      { id: 'terminal', title: 'Terminal sessions', text: '  Close what you no longer need.\n' },
      { id: 'jobs', title: 'Background jobs', text: 'Poll with job_output.' },
      { id: 'basics', title: 'Basics', text: 'Be brief.', order: 10 },
    ]
    const rendered: string[] = []
    for (const order of [
      [0, 1, 2],
      [2, 1, 0],
      [1, 0, 2],
    ]) {
      const root = await setup()
      for (const index of order) root.tools.registerGuidance(sections[index]!)
      rendered.push(root.tools.renderGuidance())
      expect(root.tools.guidance().map((section) => section.id)).toEqual(['basics', 'jobs', 'terminal'])
      await fibers.pop()!.dispose()
    }
    expect(new Set(rendered).size).toBe(1)
    expect(rendered[0]).toBe('## Basics\nBe brief.\n\n## Background jobs\nPoll with job_output.\n\n## Terminal sessions\nClose what you no longer need.')
  })

  it('refuses a duplicate or malformed guidance section', async () => {
    const root = await setup()
    const dispose = root.tools.registerGuidance({ id: 'a', title: 'A', text: 'a' })
    expect(codeOf(() => root.tools.registerGuidance({ id: 'a', title: 'A2', text: 'a2' }))).toBe('DUPLICATE_GUIDANCE')
    expect(codeOf(() => root.tools.registerGuidance({ id: 'b', title: '', text: 'b' }))).toBe('INVALID_GUIDANCE')
    expect(codeOf(() => root.tools.registerGuidance({ id: 'b', title: 'B', text: 'b', order: Number.NaN }))).toBe('INVALID_GUIDANCE')
    await dispose()
    expect(codeOf(() => root.tools.registerGuidance({ id: 'a', title: 'A2', text: 'a2' }))).toBeUndefined()
    expect(root.tools.renderGuidance()).toBe('## A2\na2')
  })
})
