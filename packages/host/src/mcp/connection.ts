import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { Agent } from 'dsh-agent'
import type { Composition } from '../compose/load-config'
import { ConnectionEnd } from './disconnect'
import { createMcpServer } from './server'

/** One client connection: its agent, its server, and the end of both. */
export interface McpConnection {
  /** The agent that owns everything this client opens. */
  readonly agent: Agent
  /** The MCP server bound to the transport. */
  readonly server: Server
  /**
   * Settles once the transport closed (client disconnect, or {@link McpConnection.close}) and the
   * agent ended, i.e. the client's sessions and jobs are closed. Rejects only if that cleanup failed.
   */
  readonly closed: Promise<void>
  /** Close the transport and end the agent; resolves like {@link McpConnection.closed}. Idempotent. */
  close(): Promise<void>
}

/** Options of {@link connectMcp}. */
export interface ConnectOptions {
  /** Gap between progress notifications of a long call. */
  progressIntervalMs?: number
}

/**
 * Serve one MCP client on `transport` as a new agent of the composition. When the transport closes,
 * for whatever reason, the agent is disposed: its terminal sessions and background jobs close and
 * their process trees are gone before {@link McpConnection.closed} settles (with `detachedTtlMs`
 * its sessions are detached instead). Calls in flight are not cancelled by the close.
 */
export async function connectMcp(
  composition: Pick<Composition, 'tools' | 'agents'>,
  transport: Transport,
  options: ConnectOptions = {},
): Promise<McpConnection> {
  const agent = await composition.agents.create()
  // A disconnect is not a cancel: the send the client left running is released (detached) or closed, never interrupted.
  const end = new ConnectionEnd()
  end.watch(transport)
  const server = createMcpServer({ tools: composition.tools, agent, ...options, callSignal: (signal) => end.follow(signal) })
  let markClosed!: () => void
  const transportClosed = new Promise<void>((resolve) => (markClosed = resolve))
  server.onclose = () => markClosed()
  const closed = transportClosed.then(() => agent.dispose())
  // Callers that never await `closed` must not see an unhandled rejection; awaiting callers still do.
  closed.catch(() => {})
  try {
    await server.connect(transport)
  } catch (error) {
    await agent.dispose().catch(() => {})
    throw error
  }
  return {
    agent,
    server,
    closed,
    close: async () => {
      await server.close()
      markClosed()
      return closed
    },
  }
}
