import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool, isTool, ToolError } from 'dsh-tools'

const echo = () => 'ok'

describe('defineTool', () => {
  it('generates the JSON Schema the model sees, with parameter descriptions', () => {
    const tool = defineTool({
      name: 'job_output',
      description: 'Read a job',
      parameters: z.strictObject({
        jobId: z.string().min(1).describe('Id of the job, e.g. pty-send-1'),
        wait: z.boolean().optional().describe('Wait until the job finishes'),
        count: z.number().int().default(500).describe('Lines to read'),
      }),
      execute: echo,
    })
    expect(tool.inputSchema).toEqual({
      type: 'object',
      properties: {
        jobId: { type: 'string', minLength: 1, description: 'Id of the job, e.g. pty-send-1' },
        wait: { type: 'boolean', description: 'Wait until the job finishes' },
        count: expect.objectContaining({ type: 'integer', default: 500, description: 'Lines to read' }),
      },
      // Defaulted fields are optional on the input side, which is what the model fills in.
      required: ['jobId'],
      additionalProperties: false,
    })
    expect(tool.inputSchema).not.toHaveProperty('$schema')
    expect(tool.requiresAgent).toBe(true)
    expect(isTool(tool)).toBe(true)
    expect(isTool({ ...tool })).toBe(true)
    expect(isTool({ name: 'x' })).toBe(false)
  })

  it('freezes the schema so no caller can change what other callers see', () => {
    const tool = defineTool({ name: 'frozen', description: 'd', parameters: z.object({ a: z.string() }), execute: echo })
    expect(Object.isFrozen(tool.inputSchema)).toBe(true)
    expect(Object.isFrozen(tool.inputSchema.properties)).toBe(true)
  })

  it.each([
    ['an empty name', { name: '' }],
    ['a name with spaces', { name: 'two words' }],
    ['a 65-character name', { name: 'x'.repeat(65) }],
    ['an empty description', { description: '  ' }],
    ['an unknown kind', { kind: 'launch' }],
    ['non-object parameters', { parameters: z.string() }],
    ['parameters JSON Schema cannot express', { parameters: z.object({ when: z.date() }) }],
    ['parameters that are not zod', { parameters: { type: 'object' } }],
  ])('refuses %s with INVALID_TOOL', (_label, override) => {
    const spec = { name: 'ok_name', description: 'd', parameters: z.object({}), execute: echo, ...override }
    let caught: unknown
    try {
      defineTool(spec as never)
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(ToolError)
    expect((caught as ToolError).code).toBe('INVALID_TOOL')
  })
})
