import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { Progress } from '@modelcontextprotocol/sdk/types.js'
import type { TerminalSessionService } from 'dsh-terminal'
import type { ToolResult } from 'dsh-tools'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { Composition } from '../src/compose/load-config'
import { annotationsForKind } from '../src/mcp/annotations'
import { connectMcp, type McpConnection } from '../src/mcp/connection'
import { load, SNAPSHOT_CONFIG } from './helpers'

let composition: Composition
const connections: McpConnection[] = []

beforeEach(async () => {
  composition = await load(SNAPSHOT_CONFIG)
})

afterEach(async () => {
  await Promise.all(connections.splice(0).map((connection) => connection.close()))
  await composition.dispose()
  vi.restoreAllMocks()
})

/** A connected SDK client on its own in-memory transport: one MCP client connection. */
async function connect(progressIntervalMs = 5): Promise<{ client: Client; connection: McpConnection }> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const connection = await connectMcp(composition, serverSide, { progressIntervalMs })
  connections.push(connection)
  const client = new Client({ name: 'test-client', version: '1.0.0' })
  await client.connect(clientSide)
  return { client, connection }
}

function text(result: Awaited<ReturnType<Client['callTool']>>): string {
  return (result.content as { type: string; text: string }[]).map((block) => block.text).join('\n')
}

describe('MCP server', () => {
  it('lists every tool with its JSON Schema and annotations from its presentation kind', async () => {
    const { client } = await connect()
    expect(client.getServerVersion()).toMatchObject({ name: 'dsh-terminal' })
    expect(client.getInstructions()).toMatch(/## Terminal sessions/)
    const { tools } = await client.listTools()
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]))
    expect(Object.keys(byName)).toEqual(composition.tools.list().map((tool) => tool.name))
    for (const info of composition.tools.list()) expect(byName[info.name]!.inputSchema).toEqual(info.inputSchema)
    expect(Object.fromEntries(tools.map((tool) => [tool.name, tool.annotations]))).toEqual({
      job_kill: { readOnlyHint: false },
      job_list: { readOnlyHint: true },
      job_output: { readOnlyHint: true },
      terminal_close: { readOnlyHint: false, destructiveHint: true },
      terminal_list: { readOnlyHint: true },
      terminal_open: { readOnlyHint: false },
      terminal_read: { readOnlyHint: true },
      terminal_send: { readOnlyHint: false },
      terminal_signal: { readOnlyHint: false },
    })
  })

  it('returns results as text content with the structured facts, and errors with isError', async () => {
    const { client } = await connect()
    const opened = await client.callTool({ name: 'terminal_open', arguments: { type: 'snapshot' } })
    expect(opened.isError).toBe(false)
    expect(text(opened)).toMatch(/^started terminal session pty-1 \[type: snapsho/)
    const sent = await client.callTool({ name: 'terminal_send', arguments: { sessionId: 'pty-1', text: 'seq 2' } })
    expect(text(sent)).toBe('seq 2\n1\n2\n[wait: stdin_read]\n[exit: 0]\n[session: running]')
    expect(sent.structuredContent).toEqual({
      sessionId: 'pty-1',
      background: false,
      waitReason: 'stdin_read',
      sessionStatus: { kind: 'running' },
      exitCode: 0,
      output: { bytes: 9, lines: 3, shownBytes: 9, foldedLines: 0, omittedLines: 0, omittedBytes: 0 },
      truncated: false,
    })
    const missing = await client.callTool({ name: 'terminal_read', arguments: { sessionId: 'pty-9' } })
    expect(missing).toEqual({
      content: [{ type: 'text', text: 'Error: unknown PTY session pty-9' }],
      isError: true,
      structuredContent: { error: { code: 'NO_SESSION', message: 'unknown PTY session pty-9' } },
    })
  })

  it('reports progress while a foreground send waits, when the client asked for it', async () => {
    const { client } = await connect()
    await client.callTool({ name: 'terminal_open', arguments: { type: 'snapshot' } })
    const progress: Progress[] = []
    let progressed!: () => void
    const firstProgress = new Promise<void>((resolve) => (progressed = resolve))
    // `sleep` holds the send until it is interrupted; a progress notification must arrive meanwhile.
    const sending = client.callTool({ name: 'terminal_send', arguments: { sessionId: 'pty-1', text: 'sleep' } }, undefined, {
      onprogress: (update) => {
        progress.push(update)
        progressed()
      },
    })
    await firstProgress
    const signalled = await client.callTool({ name: 'terminal_signal', arguments: { sessionId: 'pty-1', signal: 'SIGINT' } })
    expect(text(signalled)).toBe('delivered SIGINT to foreground process group 4242')
    expect(text(await sending)).toBe('sleep\n^C\n[wait: stdin_read]\n[exit: 130]\n[session: running]')
    expect(progress[0]).toEqual({ progress: 1, message: expect.stringMatching(/^pty-1: sleep: still running after \d+s$/) })
    for (const [index, update] of progress.entries()) expect(update.progress).toBe(index + 1)
  })

  it('cancels a call the client aborts: the send is interrupted with SIGINT', async () => {
    const { client } = await connect()
    await client.callTool({ name: 'terminal_open', arguments: { type: 'snapshot' } })
    const executions: Promise<ToolResult>[] = []
    const execute = composition.tools.execute.bind(composition.tools)
    vi.spyOn(composition.tools, 'execute').mockImplementation((request) => {
      const running = execute(request)
      executions.push(running)
      return running
    })
    const abort = new AbortController()
    let progressed!: () => void
    const started = new Promise<void>((resolve) => (progressed = resolve))
    const sending = client.callTool({ name: 'terminal_send', arguments: { sessionId: 'pty-1', text: 'sleep' } }, undefined, {
      signal: abort.signal,
      onprogress: () => progressed(),
    })
    await started
    abort.abort('changed my mind')
    await expect(sending).rejects.toThrow()
    // The server side of the cancelled call: the tool saw the cancellation and interrupted the send.
    expect(await executions[0]).toMatchObject({ isError: true, error: { code: 'CANCELLED' } })
    expect(text(await client.callTool({ name: 'terminal_read', arguments: { sessionId: 'pty-1' } }))).toContain('sleep\n^C')
  })

  it('gives each connection its own agent: sessions are invisible across clients', async () => {
    const first = await connect()
    const second = await connect()
    expect(first.connection.agent).not.toBe(second.connection.agent)
    await first.client.callTool({ name: 'terminal_open', arguments: { type: 'snapshot', name: 'mine' } })
    expect(text(await second.client.callTool({ name: 'terminal_list', arguments: {} }))).toBe('(no terminal sessions)')
    const foreign = await second.client.callTool({ name: 'terminal_send', arguments: { sessionId: 'pty-1', text: 'hi' } })
    expect(foreign.isError).toBe(true)
    expect(text(foreign)).toBe('Error: PTY session pty-1 belongs to another agent')
  })

  it('closes the sessions and jobs of a client when it disconnects', async () => {
    const { client, connection } = await connect()
    const terminals = composition.root.get('terminals') as TerminalSessionService
    await client.callTool({ name: 'terminal_open', arguments: { type: 'snapshot' } })
    const background = await client.callTool({ name: 'terminal_send', arguments: { sessionId: 'pty-1', text: 'sleep', run_in_background: true } })
    expect(text(background)).toBe('started background job pty-send-1')
    expect(terminals.hasOwnerActivity(connection.agent)).toBe(true)
    await client.close()
    await connection.closed
    expect(connection.agent.live).toBe(false)
    expect(terminals.hasOwnerActivity(connection.agent)).toBe(false)
    expect(composition.agents.list()).toEqual([])
  })
})

describe('annotations', () => {
  it('derive from presentation kinds: reads are read-only, deletes destructive, the rest not read-only', () => {
    expect(annotationsForKind('read')).toEqual({ readOnlyHint: true })
    expect(annotationsForKind('search')).toEqual({ readOnlyHint: true })
    expect(annotationsForKind('fetch')).toEqual({ readOnlyHint: true, openWorldHint: true })
    expect(annotationsForKind('delete')).toEqual({ readOnlyHint: false, destructiveHint: true })
    expect(annotationsForKind('edit')).toEqual({ readOnlyHint: false, destructiveHint: true })
    expect(annotationsForKind('execute')).toEqual({ readOnlyHint: false })
    expect(annotationsForKind('other')).toEqual({ readOnlyHint: false })
  })
})
