import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { banner } from '../cli/banner'
import { reserveStdout, waitForShutdown } from '../cli/lifecycle'
import { repositoryRoot } from '../compose/config-path'
import { loadComposition } from '../compose/load-config'
import { startHumanAccess } from '../human/host-access'
import { type MetricsServer, startMetricsServer } from '../metrics/endpoint'
import { HostMetrics } from '../metrics/host-metrics'
import { connectMcp } from './connection'
import { errorMessage } from 'dsh-basics'

/** Options of {@link runMcpStdio}. */
export interface McpStdioOptions {
  /** The cordis.yml to serve. */
  configPath: string
  /** Gap between progress notifications of a long call. */
  progressIntervalMs?: number
  /** `--web [port]`: also serve the browser view of the sessions (0 = a free port). */
  web?: number
  /** `--metrics PORT`: serve Prometheus metrics on 127.0.0.1:PORT/metrics (0 = a free port). */
  metrics?: number
}

/**
 * `dsh-terminal mcp`: serve the composition to one MCP client on stdin/stdout. Stdout carries only
 * JSON-RPC (logs and stray console output go to stderr). Returns the exit code once the client
 * disconnected or a signal arrived and every session and job of the client is closed.
 */
export async function runMcpStdio(options: McpStdioOptions): Promise<number> {
  reserveStdout()
  const composition = await loadComposition({ configPath: options.configPath }).catch((error: unknown) => {
    process.stderr.write(`dsh-terminal mcp: ${errorMessage(error)}\n`)
    return undefined
  })
  if (!composition) return 1
  if (process.stdin.isTTY) process.stderr.write(banner({ configPath: composition.configPath, workspace: process.cwd(), repository: repositoryRoot() }))

  let metrics: { host: HostMetrics; server: MetricsServer } | undefined
  if (options.metrics !== undefined) {
    const host = HostMetrics.attach(composition)
    try {
      metrics = { host, server: await startMetricsServer(host, options.metrics) }
      process.stderr.write(`dsh-terminal mcp: Prometheus metrics at ${metrics.server.url}\n`)
    } catch (error) {
      host.close()
      process.stderr.write(`dsh-terminal mcp: ${errorMessage(error)}\n`)
      await composition.dispose().catch(() => {})
      return 1
    }
  }
  const shutdown = waitForShutdown(process.stdout, process.stdin)
  const human = await startHumanAccess(composition, 'mcp', options.web !== undefined ? { web: options.web } : {})
  let code = 0
  try {
    const connection = await connectMcp(composition, new StdioServerTransport(), options)
    await Promise.race([shutdown, connection.closed.catch(() => {})])
    await connection.close().catch((error: unknown) => {
      code = 1
      process.stderr.write(`dsh-terminal mcp: closing the client's sessions failed: ${errorMessage(error)}\n`)
    })
  } finally {
    await metrics?.server.close()
    metrics?.host.close()
    await human.close()
    await composition.dispose().catch((error: unknown) => {
      code = 1
      process.stderr.write(`dsh-terminal mcp: unloading failed: ${errorMessage(error)}\n`)
    })
  }
  return code
}
