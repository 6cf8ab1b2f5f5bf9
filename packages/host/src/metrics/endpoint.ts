import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { errorMessage } from 'dsh-basics'
import { originAllowed } from '../mcp/http-auth'
import type { HostMetrics } from './host-metrics'

/** Where the metrics are served, on the HTTP host and on the stdio host's `--metrics` port alike. */
export const METRICS_PATH = '/metrics'

/** Answer one scrape: `GET` (or `HEAD`) gets the exposition text; any other method 405. */
export async function sendMetrics(metrics: HostMetrics, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' })
    res.end('405 method not allowed: scrape /metrics with GET\n')
    return
  }
  const text = await metrics.text()
  res.writeHead(200, { 'content-type': metrics.contentType, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' })
  res.end(req.method === 'HEAD' ? undefined : text)
}

/** The stdio host's metrics listener (`--metrics PORT`). */
export interface MetricsServer {
  /** `http://127.0.0.1:<port>/metrics`. */
  readonly url: string
  /** The port bound (the kernel's choice for 0). */
  readonly port: number
  /** Stop listening. */
  close(): Promise<void>
}

/**
 * Serve `metrics` at `http://127.0.0.1:port/metrics`: loopback only, no token (the stdio host has
 * none), `Origin` limited to loopback pages as on the HTTP host. Other paths get 404.
 */
export async function startMetricsServer(metrics: HostMetrics, port: number): Promise<MetricsServer> {
  const http: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname
    const refuse = (status: number, message: string) => {
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' })
      res.end(`${status} ${message}\n`)
    }
    if (!originAllowed(req.headers.origin)) return refuse(403, 'forbidden: only loopback pages may read the metrics')
    if (path !== METRICS_PATH) return refuse(404, `not found: the metrics are at ${METRICS_PATH}`)
    sendMetrics(metrics, req, res).catch((error: unknown) => refuse(500, `the metrics could not be collected: ${errorMessage(error)}`))
  })
  await new Promise<void>((resolve, reject) => {
    http.once('error', (error: NodeJS.ErrnoException) => {
      const hint = error.code === 'EADDRINUSE' ? '; pick another --metrics port, or 0 for a free one' : ''
      reject(new Error(`cannot serve metrics on 127.0.0.1:${port}: ${error.code ?? error.message}${hint}`))
    })
    http.listen({ host: '127.0.0.1', port }, () => resolve())
  })
  const bound = (http.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${bound}${METRICS_PATH}`,
    port: bound,
    close: () =>
      new Promise<void>((resolve) => {
        http.close(() => resolve())
        http.closeAllConnections()
      }),
  }
}
