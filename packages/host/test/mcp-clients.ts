import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { Composition } from '../src/compose/load-config'
import { connectMcp, type McpConnection } from '../src/mcp/connection'

/** A connected SDK client and its Streamable HTTP transport (for `sessionId` and `terminateSession`). */
export interface HttpClient {
  client: Client
  transport: StreamableHTTPClientTransport
}

/**
 * Connect the official SDK client to `url` with `Authorization: Bearer <token>` (none when `token` is
 * null). With `sessionId` it resumes that session without `initialize`, as a reconnecting client does.
 * Shared by the host's HTTP tests and `bench/suites/http.ts`, which resolves the SDK through this package.
 */
export async function connectHttp(url: string, token: string | null, sessionId?: string): Promise<HttpClient> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    sessionId,
    requestInit: { headers: token === null ? {} : { Authorization: `Bearer ${token}` } },
  })
  const client = new Client({ name: 'dsh-http-test', version: '1.0.0' })
  await client.connect(transport)
  return { client, transport }
}

/**
 * The same SDK client and server over the SDK's in-memory transport: MCP without HTTP, for the bench
 * to tell the protocol's cost from the transport's.
 */
export async function connectInMemory(composition: Pick<Composition, 'tools' | 'agents'>): Promise<{ client: Client; connection: McpConnection }> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const connection = await connectMcp(composition, serverSide)
  const client = new Client({ name: 'dsh-in-memory-test', version: '1.0.0' })
  await client.connect(clientSide)
  return { client, connection }
}

/** Call a tool; its text content joined, whether it failed, and its structured content. */
export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<{ isError: boolean; text: string; meta: Record<string, unknown> }> {
  const result = await client.callTool({ name, arguments: args })
  const text = (result.content as { text: string }[]).map((block) => block.text).join('\n')
  return { isError: result.isError === true, text, meta: (result.structuredContent ?? {}) as Record<string, unknown> }
}
