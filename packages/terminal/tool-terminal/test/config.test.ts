import { Context } from '@deepseek-ai/cordis'
import * as agentPlugin from 'dsh-agent'
import * as terminalPlugin from 'dsh-terminal'
import * as toolTerminalPlugin from 'dsh-tool-terminal'
import { Config } from 'dsh-tool-terminal'
import { terminalGuidance } from '../src/internal'
import * as toolsPlugin from 'dsh-tools'
import { afterEach, describe, expect, it } from 'vitest'
import { disposeAll, setup } from './harness'

afterEach(disposeAll)

const TOOL_NAMES = ['terminal_close', 'terminal_list', 'terminal_open', 'terminal_read', 'terminal_send', 'terminal_signal']

async function mountError(config: unknown): Promise<string> {
  const root = new Context()
  await root.plugin(agentPlugin)
  await root.plugin(toolsPlugin)
  await root.plugin(terminalPlugin)
  try {
    await root.plugin(toolTerminalPlugin, config as never)
    return 'mounted'
  } catch (error) {
    return error instanceof Error ? `${error.name}: ${error.message}` : String(error)
  }
}

describe('config', () => {
  it('defaults: background enabled, 256 KiB cap, background sends and per-send waits bounded by 10 minutes', () => {
    expect(Config.parse(undefined)).toEqual({
      enableRunInBackground: true,
      maxResultBytes: 262144,
      defaultMaxBytes: 262144,
      foldRepeatedLines: true,
      backgroundTimeoutMs: 600_000,
      maxTimeoutMs: 600_000,
    })
  })

  it('defaultMaxBytes: the window without maxBytes, at most maxResultBytes, defaulting to it', async () => {
    expect(Config.parse({ maxResultBytes: 65536 }).defaultMaxBytes).toBe(65536)
    expect(Config.parse({ defaultMaxBytes: 16384 })).toMatchObject({ defaultMaxBytes: 16384, maxResultBytes: 262144 })
    expect(() => Config.parse({ maxResultBytes: 4096, defaultMaxBytes: 16384 })).toThrow(/defaultMaxBytes \(16384\) must be at most maxResultBytes \(4096\)/)
    expect(() => Config.parse({ defaultMaxBytes: 63 })).toThrow(/at least 64 bytes/)
    await expect(setup({ config: { maxResultBytes: 4096, defaultMaxBytes: 16384 } })).rejects.toThrow(/defaultMaxBytes/)
  })

  it('maxTimeoutMs is bounded: 1 s to 24 h, an integer', async () => {
    expect(await mountError({ maxTimeoutMs: 999 })).toContain('maxTimeoutMs must be at least 1000 ms')
    expect(await mountError({ maxTimeoutMs: 86_400_001 })).toContain('maxTimeoutMs must be at most 86400000 ms (24 hours)')
    expect(await mountError({ maxTimeoutMs: 2000.5 })).toContain('maxTimeoutMs must be an integer number of milliseconds')
    expect(await mountError({ maxTimeoutMs: 1000 })).toBe('mounted')
  })

  it('backgroundTimeoutMs is bounded: 1 s to 24 h, an integer', async () => {
    expect(await mountError({ backgroundTimeoutMs: 999 })).toContain('backgroundTimeoutMs must be at least 1000 ms')
    expect(await mountError({ backgroundTimeoutMs: 86_400_001 })).toContain('backgroundTimeoutMs must be at most 86400000 ms (24 hours)')
    expect(await mountError({ backgroundTimeoutMs: 1500.5 })).toContain('backgroundTimeoutMs must be an integer number of milliseconds')
    expect(await mountError({ backgroundTimeoutMs: 1000 })).toBe('mounted')
  })

  it('a cap below 64 bytes (or not an integer) is a clear config error at mount', async () => {
    expect(await mountError({ maxResultBytes: 63 })).toContain('maxResultBytes must be at least 64 bytes, so that results keep session ids and status lines')
    expect(await mountError({ maxResultBytes: 100.5 })).toContain('maxResultBytes must be an integer number of bytes')
    expect(await mountError({ maxResultBytes: 64 })).toBe('mounted')
  })

  it('registers the six tools and the guidance, and removes them when unloaded', async () => {
    const h = await setup({ jobs: false })
    expect(h.root.tools.list().map((tool) => tool.name)).toEqual(TOOL_NAMES)
    expect(h.root.tools.guidance().map((section) => section.id)).toEqual(['terminal'])
    const guidance = h.root.tools.renderGuidance()
    expect(guidance.startsWith('## Terminal sessions\nUse a terminal session only when state must persist')).toBe(true)
    for (const phrase of [
      'terminal_close',
      'inferred_idle (output went quiet where nothing could be proven) and timeout do NOT prove the command finished',
      'A command proven not to read the terminal (a sleep, a build) is waited for',
      'not the name',
      'run_in_background',
      'password (a secret: ask the user for it, never invent one)',
      'continuation (the command is unfinished: send the rest, or "\\u0003" to abandon it)',
      'give terminal_send waitFor',
      '[wait: output_match]',
      'terminal_read {view: "screen"}',
      'keys: ["Escape", ":", "w", "q", "Enter"]',
      'keys: ["q"] quits a pager',
      'rows and cols on terminal_send resize',
    ]) {
      expect(guidance).toContain(phrase)
    }
  })

  it('unloading the plugin removes its tools and guidance; it never requires ctx.jobs', async () => {
    const root = new Context()
    await root.plugin(agentPlugin)
    await root.plugin(toolsPlugin)
    await root.plugin(terminalPlugin)
    const fiber = await root.plugin(toolTerminalPlugin, {})
    expect(root.tools.list().length).toBe(6)
    await fiber.dispose()
    expect(root.tools.list()).toEqual([])
    expect(root.tools.renderGuidance()).toBe('')
  })

  it('pins the input schemas of the six tools', async () => {
    const h = await setup()
    const schemas = Object.fromEntries(h.root.tools.list().map((tool) => [tool.name, tool.inputSchema]))
    const shape = (name: string) => {
      const schema = schemas[name] as {
        properties: Record<string, { type?: string; default?: unknown; enum?: unknown }>
        required?: string[]
        additionalProperties?: boolean
      }
      return {
        properties: Object.fromEntries(
          Object.entries(schema.properties).map(([key, value]) => [key, { type: value.type, default: value.default, enum: value.enum }]),
        ),
        required: schema.required ?? [],
        additionalProperties: schema.additionalProperties,
      }
    }
    const s = { type: 'string', default: undefined, enum: undefined }
    expect(Object.fromEntries(TOOL_NAMES.map((name) => [name, shape(name)]))).toEqual({
      terminal_open: {
        properties: {
          type: s,
          name: s,
          cwd: s,
          target: s,
          resume: s,
          rows: { type: 'integer', default: undefined, enum: undefined },
          cols: { type: 'integer', default: undefined, enum: undefined },
        },
        required: ['type'],
        additionalProperties: false,
      },
      terminal_send: {
        properties: {
          sessionId: s,
          text: s,
          keys: { type: 'array', default: undefined, enum: undefined },
          submit: { type: 'boolean', default: undefined, enum: undefined },
          rows: { type: 'integer', default: undefined, enum: undefined },
          cols: { type: 'integer', default: undefined, enum: undefined },
          waitFor: s,
          timeoutMs: { type: 'integer', default: undefined, enum: undefined },
          idleMs: { type: 'integer', default: undefined, enum: undefined },
          maxBytes: { type: 'integer', default: undefined, enum: undefined },
          run_in_background: { type: 'boolean', default: undefined, enum: undefined },
        },
        required: ['sessionId'],
        additionalProperties: false,
      },
      terminal_read: {
        properties: {
          sessionId: s,
          view: { type: 'string', default: undefined, enum: ['lines', 'screen'] },
          offset: { type: 'integer', default: undefined, enum: undefined },
          fromLine: { type: 'integer', default: undefined, enum: undefined },
          count: { type: 'integer', default: undefined, enum: undefined },
          maxBytes: { type: 'integer', default: undefined, enum: undefined },
        },
        required: ['sessionId'],
        additionalProperties: false,
      },
      terminal_signal: {
        properties: { sessionId: s, signal: { type: 'string', default: undefined, enum: ['SIGINT', 'SIGTERM', 'SIGKILL', 'SIGTSTP', 'SIGHUP'] } },
        required: ['sessionId', 'signal'],
        additionalProperties: false,
      },
      terminal_close: { properties: { sessionId: s }, required: ['sessionId'], additionalProperties: false },
      terminal_list: { properties: {}, required: [], additionalProperties: false },
    })
    // Every parameter tells the model how to use it.
    for (const [name, schema] of Object.entries(schemas)) {
      for (const [key, property] of Object.entries((schema as { properties: Record<string, { description?: string }> }).properties)) {
        expect({ name, key, described: (property.description ?? '').length > 20 }).toEqual({ name, key, described: true })
      }
    }
  })

  it('enableRunInBackground: false removes the property and its sentence, and refuses a forced argument', async () => {
    const h = await setup({ config: { enableRunInBackground: false } })
    const send = h.root.tools.list().find((tool) => tool.name === 'terminal_send')!
    expect(Object.keys((send.inputSchema as { properties: object }).properties)).toEqual([
      'sessionId',
      'text',
      'keys',
      'submit',
      'rows',
      'cols',
      'waitFor',
      'timeoutMs',
      'idleMs',
      'maxBytes',
    ])
    expect(send.description).not.toContain('run_in_background')
    expect(h.root.tools.renderGuidance()).not.toContain('run_in_background')
    await h.call('terminal_open', { type: 'shell' })
    const forced = await h.call('terminal_send', { sessionId: 'pty-1', text: 'ls', run_in_background: true })
    expect(h.text(forced)).toBe('Error: invalid arguments for tool "terminal_send": arguments: Unrecognized key: "run_in_background"')
    expect(h.backend.session('pty-1').sends).toEqual([])
    expect(h.root.jobs.list(h.agent)).toEqual([])

    const enabled = await setup()
    const enabledSend = enabled.root.tools.list().find((tool) => tool.name === 'terminal_send')!
    expect(enabledSend.description).toContain('set run_in_background and follow the job with job_output')
  })

  it('the guidance text adapts to the background option', () => {
    expect(terminalGuidance(true).text).toContain('run_in_background')
    expect(terminalGuidance(false).text).not.toContain('run_in_background')
    expect(terminalGuidance(true).text).toContain('a background job ends there, and job_output takes waitFor too')
    expect(terminalGuidance(false).text).not.toContain('job_output')
    // The input states and waitFor took two lines, shaped results one, full-screen programs one, a password and an attached person one each, no more.
    expect(terminalGuidance(false).text.split('\n').length).toBe(12)
    expect(terminalGuidance(false).text).toContain('is the exact call that returns the middle')
  })

  it('the input schema states the wait bounds it enforces', async () => {
    const h = await setup({ config: { maxTimeoutMs: 60_000, backgroundTimeoutMs: 120_000 } })
    const send = h.root.tools.list().find((tool) => tool.name === 'terminal_send')!
    const properties = (send.inputSchema as { properties: Record<string, { minimum?: number; maximum?: number }> }).properties
    // A background send may ask for up to backgroundTimeoutMs; a foreground one is refused above maxTimeoutMs.
    expect({ timeoutMs: properties.timeoutMs, idleMs: properties.idleMs }).toMatchObject({
      timeoutMs: { minimum: 1, maximum: 120_000 },
      idleMs: { minimum: 1, maximum: 60_000 },
    })
    expect(send.description).toContain('output_match means a line matched waitFor')
  })
})
