import { Context, type Fiber } from '@deepseek-ai/cordis'
import * as agentPlugin from 'dsh-agent'
import type { Agent } from 'dsh-agent'
import { afterEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { fitTailAndTrailer } from 'dsh-basics'
import * as toolsPlugin from 'dsh-tools'
import { defineTool, textContent, ToolError, type ToolCallContext, type ToolContent } from 'dsh-tools'

let fibers: Fiber[] = []

async function setup() {
  const root = new Context()
  fibers = [await root.plugin(agentPlugin), await root.plugin(toolsPlugin)]
  const agent = await root.agents.create()
  return { root, agent }
}

/** A byte cap that keeps the tail of the text, as a terminal tool would. */
function capAt(maxBytes: number) {
  return (content: ToolContent[]) => [textContent(fitTailAndTrailer(content.map((block) => block.text).join('\n'), '', maxBytes).text)]
}

const greet = defineTool({
  name: 'greet',
  description: 'Greet someone',
  kind: 'think',
  parameters: z.strictObject({
    who: z.string().min(1).describe('Who to greet'),
    times: z.number().int().min(1).default(1),
  }),
  execute: ({ who, times }) => Array.from({ length: times }, () => `hello ${who}`).join('\n'),
})

describe('ctx.tools.execute', () => {
  afterEach(async () => {
    for (const fiber of fibers.reverse()) await fiber.dispose()
    fibers = []
  })

  it('validates, runs, and returns one text block with the default presentation', async () => {
    const { root, agent } = await setup()
    let seen: ToolCallContext | undefined
    root.tools.register(
      defineTool({
        name: 'probe',
        description: 'Record the call',
        parameters: z.object({ n: z.number() }),
        execute: (args, call) => {
          seen = call
          return `n=${args.n}`
        },
      }),
    )
    const result = await root.tools.execute({ callId: 'c1', name: 'probe', arguments: { n: 4 }, agent })
    expect(result).toEqual({
      callId: 'c1',
      name: 'probe',
      content: [{ type: 'text', text: 'n=4' }],
      isError: false,
      presentation: { kind: 'other', title: 'probe', rawInput: { n: 4 } },
    })
    expect(seen?.callId).toBe('c1')
    expect(seen?.name).toBe('probe')
    expect(seen?.agent === agent).toBe(true)
    expect(seen?.signal.aborted).toBe(false)
  })

  it('applies defaults and accepts arguments as JSON text; missing arguments mean {}', async () => {
    const { root, agent } = await setup()
    root.tools.register(greet)
    const fromJson = await root.tools.execute({ callId: 'c', name: 'greet', arguments: '{"who":"ada","times":2}', agent })
    expect(fromJson.content).toEqual([{ type: 'text', text: 'hello ada\nhello ada' }])
    const noArgs = defineTool({ name: 'ping', description: 'Ping', parameters: z.object({}), execute: () => 'pong' })
    root.tools.register(noArgs)
    for (const missing of [undefined, null, '']) {
      const result = await root.tools.execute({ callId: 'c', name: 'ping', arguments: missing, agent })
      expect(result.content).toEqual([{ type: 'text', text: 'pong' }])
    }
  })

  it('passes structured output, meta and a tool-reported error through', async () => {
    const { root, agent } = await setup()
    root.tools.register(
      defineTool({
        name: 'report',
        description: 'Report',
        parameters: z.object({ fail: z.boolean() }),
        execute: ({ fail }) => ({ content: [textContent(fail ? 'nope' : 'yes')], isError: fail, meta: { fail } }),
      }),
    )
    const ok = await root.tools.execute({ callId: 'c', name: 'report', arguments: { fail: false }, agent })
    expect(ok).toMatchObject({ content: [{ type: 'text', text: 'yes' }], isError: false, meta: { fail: false } })
    const reported = await root.tools.execute({ callId: 'c', name: 'report', arguments: { fail: true }, agent })
    expect(reported).toMatchObject({ content: [{ type: 'text', text: 'nope' }], isError: true, meta: { fail: true } })
    expect(reported.error).toBeUndefined()
  })

  it('reports an unknown tool with its name and the available tools', async () => {
    const { root, agent } = await setup()
    root.tools.register(greet)
    const result = await root.tools.execute({ callId: 'c', name: 'gret', arguments: { who: 'x' }, agent })
    expect(result.isError).toBe(true)
    expect(result.error?.code).toBe('UNKNOWN_TOOL')
    expect(result.content).toEqual([{ type: 'text', text: 'Error: unknown tool "gret"; available tools: greet' }])
    expect(result.presentation).toEqual({ kind: 'other', title: 'gret', rawInput: { who: 'x' } })
  })

  it('bounds the echo of an absurd unknown tool name', async () => {
    const { root, agent } = await setup()
    const result = await root.tools.execute({ callId: 'c', name: 'x'.repeat(10_000), agent })
    expect(result.error?.code).toBe('UNKNOWN_TOOL')
    expect(result.content[0]!.text.length).toBeLessThan(300)
    expect(result.content[0]!.text).toMatch(/no tools are registered$/)
  })

  it.each([
    ['a missing field', {}, 'who: Invalid input: expected string, received undefined'],
    ['a wrong type', { who: 7 }, 'who: Invalid input: expected string, received number'],
    ['a bad nested value', { who: 'x', times: 0 }, 'times: Too small: expected number to be >=1'],
    ['an unexpected key', { who: 'x', whom: 'y' }, 'arguments: Unrecognized key: "whom"'],
    ['a non-object', [1, 2], 'arguments: Invalid input: expected object, received array'],
  ])('refuses %s, naming the tool and the field', async (_label, args, detail) => {
    const { root, agent } = await setup()
    let ran = false
    root.tools.register(defineTool({ ...greet, execute: () => ((ran = true), 'ran') }))
    const result = await root.tools.execute({ callId: 'c', name: 'greet', arguments: args, agent })
    expect(ran).toBe(false)
    expect(result.isError).toBe(true)
    expect(result.error).toEqual({ code: 'INVALID_ARGUMENTS', message: `invalid arguments for tool "greet": ${detail}` })
    expect(result.content).toEqual([{ type: 'text', text: `Error: invalid arguments for tool "greet": ${detail}` }])
    expect(result.presentation).toEqual({ kind: 'think', title: 'greet', rawInput: args })
  })

  it('refuses arguments that are not valid JSON text', async () => {
    const { root, agent } = await setup()
    root.tools.register(greet)
    const result = await root.tools.execute({ callId: 'c', name: 'greet', arguments: '{"who":', agent })
    expect(result.error?.code).toBe('INVALID_ARGUMENTS')
    expect(result.error?.message).toMatch(/^invalid arguments for tool "greet": arguments are not valid JSON/)
  })

  it('turns a thrown error into one Error text block, keeping a string code', async () => {
    const { root, agent } = await setup()
    root.tools.register(
      defineTool({
        name: 'explode',
        description: 'Throw',
        parameters: z.object({ coded: z.boolean().default(false) }),
        execute: async ({ coded }) => {
          if (coded) throw new ToolError('SEND_ACTIVE', 'a send is already running on pty-1')
          throw new Error('boom')
        },
      }),
    )
    const plain = await root.tools.execute({ callId: 'c', name: 'explode', agent })
    expect(plain).toMatchObject({ content: [{ type: 'text', text: 'Error: boom' }], isError: true, error: { code: 'TOOL_FAILED', message: 'boom' } })
    const coded = await root.tools.execute({ callId: 'c', name: 'explode', arguments: { coded: true }, agent })
    expect(coded.error).toEqual({ code: 'SEND_ACTIVE', message: 'a send is already running on pty-1' })
    expect(coded.content).toEqual([{ type: 'text', text: 'Error: a send is already running on pty-1' }])
  })

  it('reports a malformed tool result as INVALID_RESULT', async () => {
    const { root, agent } = await setup()
    root.tools.register(defineTool({ name: 'bad', description: 'Bad', parameters: z.object({}), execute: () => ({ content: 'text' }) as never }))
    const result = await root.tools.execute({ callId: 'c', name: 'bad', agent })
    expect(result.error?.code).toBe('INVALID_RESULT')
    expect(result.isError).toBe(true)
  })

  it('applies finalizeContent last, so a byte cap covers results and every kind of error', async () => {
    const { root, agent } = await setup()
    const seen: boolean[] = []
    root.tools.register(
      defineTool({
        name: 'capped',
        description: 'Capped',
        parameters: z.object({ text: z.string(), fail: z.boolean().default(false) }),
        execute: ({ text, fail }) => {
          if (fail) throw new Error(text)
          return text
        },
        finalizeContent: (content, info) => {
          seen.push(info.isError)
          return capAt(16)(content)
        },
      }),
    )
    const long = `${'a'.repeat(100)}THE-END`
    const ok = await root.tools.execute({ callId: 'c', name: 'capped', arguments: { text: long }, agent })
    expect(ok.content).toEqual([{ type: 'text', text: 'aaaaaaaaaTHE-END' }])
    const thrown = await root.tools.execute({ callId: 'c', name: 'capped', arguments: { text: long, fail: true }, agent })
    expect(thrown.content).toEqual([{ type: 'text', text: 'aaaaaaaaaTHE-END' }])
    expect(thrown.error?.message).toBe(long)
    const invalid = await root.tools.execute({ callId: 'c', name: 'capped', arguments: { text: 3 }, agent })
    expect(Buffer.byteLength(invalid.content[0]!.text)).toBeLessThanOrEqual(16)
    const noAgent = await root.tools.execute({ callId: 'c', name: 'capped', arguments: { text: 'x' } })
    expect(noAgent.error?.code).toBe('NO_AGENT')
    expect(Buffer.byteLength(noAgent.content[0]!.text)).toBeLessThanOrEqual(16)
    expect(seen).toEqual([false, true, true, true])
  })

  it('reports a finalizeContent failure as FINALIZE_FAILED', async () => {
    const { root, agent } = await setup()
    root.tools.register(
      defineTool({
        name: 'fin',
        description: 'Fin',
        parameters: z.object({}),
        execute: () => ({ content: [textContent('x')], meta: { secret: 1 } }),
        finalizeContent: () => {
          throw new Error('cap broke')
        },
      }),
    )
    const result = await root.tools.execute({ callId: 'c', name: 'fin', agent })
    expect(result.error).toEqual({ code: 'FINALIZE_FAILED', message: 'tool "fin" failed to finalize its result: cap broke' })
    expect(result.isError).toBe(true)
    expect(result.meta).toBeUndefined()
  })

  it('requires a live initiating agent unless the tool opts out', async () => {
    const { root, agent } = await setup()
    let calls = 0
    root.tools.register(defineTool({ ...greet, execute: () => `${++calls}` }))
    const anonymous = defineTool({
      name: 'anon',
      description: 'Runs without an agent',
      requiresAgent: false,
      parameters: z.object({}),
      execute: (_args, call) => (call.agent ? `agent ${call.agent.id}` : 'no agent'),
    })
    root.tools.register(anonymous)
    const missing = await root.tools.execute({ callId: 'c', name: 'greet', arguments: { who: 'x' } })
    expect(missing.error).toEqual({ code: 'NO_AGENT', message: 'tool "greet" requires an initiating agent' })
    expect((await root.tools.execute({ callId: 'c', name: 'anon' })).content[0]!.text).toBe('no agent')
    expect((await root.tools.execute({ callId: 'c', name: 'anon', agent })).content[0]!.text).toBe(`agent ${agent.id}`)
    await agent.dispose()
    const ended = await root.tools.execute({ callId: 'c', name: 'greet', arguments: { who: 'x' }, agent })
    expect(ended.error?.code).toBe('AGENT_ENDED')
    expect(calls).toBe(0)
  })

  it('does not start a call whose signal is already aborted, and reports an aborted run as CANCELLED', async () => {
    const { root, agent } = await setup()
    let started = 0
    root.tools.register(
      defineTool({
        name: 'slow',
        description: 'Wait for abort',
        parameters: z.object({}),
        execute: (_args, call) =>
          new Promise<string>((_resolve, reject) => {
            started++
            call.signal.addEventListener('abort', () => reject(call.signal.reason))
          }),
      }),
    )
    const before = new AbortController()
    before.abort()
    const early = await root.tools.execute({ callId: 'c1', name: 'slow', agent, signal: before.signal })
    expect(early.error?.code).toBe('CANCELLED')
    expect(started).toBe(0)

    const during = new AbortController()
    const pending = root.tools.execute({ callId: 'c2', name: 'slow', agent, signal: during.signal })
    await Promise.resolve()
    expect(started).toBe(1)
    during.abort()
    const result = await pending
    expect(result.error?.code).toBe('CANCELLED')
    expect(result.isError).toBe(true)
  })

  it('presents per call and per result, with a terminal card', async () => {
    const { root, agent } = await setup()
    root.tools.register(
      defineTool({
        name: 'term_send',
        description: 'Send text',
        kind: 'execute',
        parameters: z.object({ sessionId: z.string(), text: z.string() }),
        execute: ({ text }) => ({ content: [textContent(`$ ${text}`)], meta: { exitCode: 0 } }),
        present: (args, result) =>
          result
            ? { title: `${args.sessionId}: exit ${String(result.meta?.exitCode)}`, card: { type: 'terminal', sessionId: args.sessionId } }
            : { title: `${args.sessionId}: ${args.text}`, rawInput: { text: args.text } },
      }),
    )
    const request = { callId: 'c', name: 'term_send', arguments: { sessionId: 'pty-1', text: 'ls' }, agent }
    expect(root.tools.describeCall(request)).toEqual({ kind: 'execute', title: 'pty-1: ls', rawInput: { text: 'ls' } })
    const result = await root.tools.execute(request)
    expect(result.presentation).toEqual({ kind: 'execute', title: 'pty-1: exit 0', rawInput: { text: 'ls' }, card: { type: 'terminal', sessionId: 'pty-1' } })
    expect(root.tools.describeCall({ name: 'term_send', arguments: { text: 1 } })).toEqual({ kind: 'execute', title: 'term_send', rawInput: { text: 1 } })
    expect(root.tools.describeCall({ name: 'nope', arguments: {} })).toEqual({ kind: 'other', title: 'nope', rawInput: {} })
  })

  it('ignores a failing or malformed presentation intent instead of failing the call', async () => {
    const { root, agent } = await setup()
    root.tools.register(
      defineTool({
        name: 'shy',
        description: 'Shy',
        kind: 'read',
        parameters: z.object({ mode: z.enum(['throw', 'garbage']) }),
        execute: () => 'fine',
        present: ({ mode }) => {
          if (mode === 'throw') throw new Error('no')
          return { kind: 'launch' as never, title: '' }
        },
      }),
    )
    for (const mode of ['throw', 'garbage']) {
      const result = await root.tools.execute({ callId: 'c', name: 'shy', arguments: { mode }, agent })
      expect(result.isError).toBe(false)
      expect(result.presentation).toEqual({ kind: 'read', title: 'shy', rawInput: { mode } })
    }
  })
})

/** Compile-time check: tools that require an agent see `Agent`, opted-out tools see `Agent | undefined`. */
export function typeChecks(): void {
  defineTool({
    name: 't',
    description: 'd',
    parameters: z.object({}),
    execute: (_args, call) => {
      const agent: Agent = call.agent
      return agent.id
    },
  })
  defineTool({
    name: 't',
    description: 'd',
    requiresAgent: false,
    parameters: z.object({}),
    execute: (_args, call) => {
      // @ts-expect-error the agent may be missing
      const agent: Agent = call.agent
      return String(agent)
    },
  })
}
