import { PassThrough } from 'node:stream'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { children, descendants, eventually, isAlive, processName } from 'dsh-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Composition } from '../src/compose/load-config'
import { connectMcp, type McpConnection } from '../src/mcp/connection'
import { McpHttpServer } from '../src/mcp/http'
import { DEFAULT_CONFIG, load, tempDir } from './helpers'
import { callTool, connectHttp } from './mcp-clients'

// A client's disconnect is not a cancel: with detachedTtlMs its sessions are detached, the send it
// left running goes on (no SIGINT), and the next client resumes the session and gets that send's
// output and end. Real SDK clients, a real bash (unsandboxed: this is about the connection).

const TOKEN = 'test-token-0123456789abcdef'

/** The client side of an MCP stdio transport over two streams (what StdioClientTransport does over a child's pipes). */
class StreamClientTransport implements Transport {
  readonly #buffer = new ReadBuffer()
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void
  constructor(
    private readonly input: PassThrough,
    private readonly output: PassThrough,
  ) {}
  async start(): Promise<void> {
    this.input.on('data', (chunk: Buffer) => {
      this.#buffer.append(chunk)
      for (let message = this.#buffer.readMessage(); message; message = this.#buffer.readMessage()) this.onmessage?.(message)
    })
  }
  async send(message: JSONRPCMessage): Promise<void> {
    this.output.write(serializeMessage(message))
  }
  async close(): Promise<void> {
    // The pipes end as when the client process goes: the server's stdin sees its end.
    this.output.end()
    this.onclose?.()
  }
}

let composition: Composition
let removeDir: () => Promise<void>

beforeAll(async () => {
  const { dir, remove } = await tempDir('dsh-detach-')
  removeDir = remove
  const overlay = join(dir, 'detach.yml')
  await writeFile(
    overlay,
    [
      '- id: base',
      '  name: cordis:include',
      '  config:',
      `    path: ${JSON.stringify(DEFAULT_CONFIG)}`,
      '    patches:',
      '      - id: sandbox-policy',
      '        config: { mode: danger-full-access, workspaceRoot: . }',
      '      - id: sandbox',
      '        disabled: true',
      '      - id: terminals',
      '        config: { detachedTtlMs: 600000 }',
      '',
    ].join('\n'),
  )
  composition = await load(overlay)
})

afterAll(async () => {
  await composition?.dispose()
  await removeDir?.()
  expect(children(process.pid).filter(isAlive)).toEqual([])
})

type Call = (name: string, args?: Record<string, unknown>) => Promise<{ isError: boolean; text: string; meta: Record<string, unknown> }>

/**
 * Client 1 starts `sleep 1; echo finished` and goes while it runs (`disconnect`); client 2 resumes
 * the session: the resume shows the command's output once, its exit status, and the shell's state.
 */
async function leaveAndResume(first: Call, disconnect: () => Promise<void>, second: Call): Promise<void> {
  const opened = await first('terminal_open', { type: 'shell', name: 'left' })
  const sessionId = opened.meta.sessionId as string
  const pid = opened.meta.pid as number
  await first('terminal_send', { sessionId, text: 'export DSH_LEFT=kept' })
  const running = first('terminal_send', { sessionId, text: 'sleep 1; echo finished' }).catch((error: unknown) => error)
  await eventually(() => descendants(pid).some((child) => processName(child.pid) === 'sleep'), 'the sleep runs')
  await disconnect()
  await running

  const listed = await second('terminal_list')
  expect(listed.text).toMatch(new RegExp(`^${sessionId} \\(left\\) \\[shell\\] running detached \\d+s ago`))
  const resumed = await second('terminal_open', { type: 'shell', resume: sessionId })
  expect(resumed.isError).toBe(false)
  expect(resumed.text.match(/^finished$/gm)).toHaveLength(1)
  expect(resumed.text).toContain('[exit: 0]')
  expect(resumed.meta).toMatchObject({ resumed: true, waitReason: 'stdin_read', exitCode: 0 })
  const state = await second('terminal_send', { sessionId, text: 'echo "$DSH_LEFT"' })
  expect(state.text).toContain('\nkept\n')
  expect(state.text).not.toContain('finished')
  await second('terminal_close', { sessionId })
  expect(isAlive(pid)).toBe(false)
}

describe('a client that disconnects in the middle of a send', () => {
  it('over Streamable HTTP: the next client resumes and sees the send finish', async () => {
    const server = await McpHttpServer.start(composition, { address: { host: '127.0.0.1', port: 0 }, token: TOKEN })
    try {
      const one = await connectHttp(server.url, TOKEN)
      const two = await connectHttp(server.url, TOKEN)
      try {
        await leaveAndResume(
          (name, args) => callTool(one.client, name, args),
          async () => {
            await one.transport.terminateSession()
            await one.client.close()
          },
          (name, args) => callTool(two.client, name, args),
        )
      } finally {
        await two.client.close()
      }
    } finally {
      await server.close()
    }
  })

  it('over the stdio transport: the next client resumes and sees the send finish', async () => {
    const connections: McpConnection[] = []
    const clients: Client[] = []
    const connect = async () => {
      const toServer = new PassThrough()
      const toClient = new PassThrough()
      connections.push(await connectMcp(composition, new StdioServerTransport(toServer, toClient)))
      const client = new Client({ name: 'dsh-stdio-test', version: '1.0.0' })
      await client.connect(new StreamClientTransport(toClient, toServer))
      clients.push(client)
      return { client, connection: connections.at(-1) as McpConnection }
    }
    try {
      const one = await connect()
      const two = await connect()
      await leaveAndResume(
        (name, args) => callTool(one.client, name, args),
        async () => {
          // The client goes (its pipe ends), then the host closes the transport, as `runMcpStdio` does on stdin's end.
          await one.client.close()
          await one.connection.close()
        },
        (name, args) => callTool(two.client, name, args),
      )
    } finally {
      for (const client of clients) await client.close()
      for (const connection of connections) await connection.close()
    }
  })
})

describe('a client that disconnects while a background job runs', () => {
  it('over Streamable HTTP: the job goes on; the client that resumes the session follows it to its exit 3', async () => {
    const server = await McpHttpServer.start(composition, { address: { host: '127.0.0.1', port: 0 }, token: TOKEN })
    try {
      const one = await connectHttp(server.url, TOKEN)
      const two = await connectHttp(server.url, TOKEN)
      try {
        const opened = await callTool(one.client, 'terminal_open', { type: 'shell' })
        const sessionId = opened.meta.sessionId as string
        const text = "bash -c 'for i in $(seq 1 20); do echo tick-$i; sleep 0.1; done; exit 3'"
        const started = await callTool(one.client, 'terminal_send', { sessionId, text, run_in_background: true })
        const jobId = started.meta.jobId as string
        let seen = ''
        const ticks = () => seen.match(/^tick-\d+$/gm) ?? []
        await eventually(async () => {
          seen += `\n${(await callTool(one.client, 'job_output', { jobId })).text}`
          return ticks().length >= 2
        }, 'the first ticks')
        await one.transport.terminateSession()
        await one.client.close()

        const resumed = await callTool(two.client, 'terminal_open', { type: 'shell', resume: sessionId })
        expect(resumed.isError).toBe(false)
        expect(resumed.meta).toMatchObject({ resumed: true, jobs: [jobId] })
        seen += `\n${(await callTool(two.client, 'job_output', { jobId, wait: true })).text}`
        seen += `\n${(await callTool(two.client, 'job_output', { jobId })).text}`
        expect(ticks()).toEqual(Array.from({ length: 20 }, (_, index) => `tick-${index + 1}`))
        expect(seen).toContain('exit: 3')
        expect(seen).not.toContain('SIGINT')
        await callTool(two.client, 'terminal_close', { sessionId })
      } finally {
        await two.client.close()
      }
    } finally {
      await server.close()
    }
  })
})
