import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { eventually } from 'dsh-testkit'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { parseCliArgs } from '../src/cli/args'
import type { Composition } from '../src/compose/load-config'
import { HUMAN_CLIENTS, HumanGateway } from '../src/human/gateway'
import { McpHttpServer } from '../src/mcp/http'
import { startMetricsServer } from '../src/metrics/endpoint'
import { HostMetrics } from '../src/metrics/host-metrics'
import { CLI_ARGS, DEFAULT_CONFIG, load, SNAPSHOT_CONFIG, TSX } from './helpers'
import { callTool, connectHttp } from './mcp-clients'
import { HANDSHAKE, jsonRpcLines, start } from './process'
import { type Family, parsePrometheusText, seriesValue } from './prometheus-text'

const TOKEN = 'metrics-test-token-0123456789'
const AGENT_SECRET = 'agent-metric-Pw-5d1c0e'
const HUMAN_SECRET = 'human-metric-Pw-93aa7b'

let composition: Composition
const servers: McpHttpServer[] = []
const clients: Client[] = []

beforeEach(async () => {
  // The default composition: sandboxed bash (bubblewrap), workspace-write, so a cwd outside the workspace is refused.
  composition = await load(DEFAULT_CONFIG)
})

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()))
  for (const server of servers.splice(0)) await server.close()
  await composition.dispose()
})

async function serve(metrics?: 'token' | 'open' | 'off'): Promise<McpHttpServer> {
  const server = await McpHttpServer.start(composition, { address: { host: '127.0.0.1', port: 0 }, token: TOKEN, ...(metrics ? { metrics } : {}) })
  servers.push(server)
  return server
}

function metricsUrl(server: McpHttpServer): string {
  return server.url.replace(/\/mcp$/, '/metrics')
}

/** Scrape with the token; the response parsed by the strict parser, and its raw text. */
async function scrape(server: McpHttpServer, token: string | null = TOKEN): Promise<{ families: Map<string, Family>; text: string }> {
  const response = await fetch(metricsUrl(server), { headers: token === null ? {} : { Authorization: `Bearer ${token}` } })
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
  const text = await response.text()
  return { families: parsePrometheusText(text), text }
}

describe('/metrics on the HTTP host', () => {
  it('parses strictly and its counters move as calls are made, with no typed secret in any series', async () => {
    const server = await serve()
    const { client } = await connectHttp(server.url, TOKEN)
    clients.push(client)

    const before = await scrape(server)
    expect(seriesValue(before.families, 'dsh_terminal_sends_total', { wait_reason: 'stdin_read' })).toBe(0)
    expect(before.families.get('dsh_terminal_send_duration_seconds')?.type).toBe('histogram')
    expect(seriesValue(before.families, 'dsh_terminal_agents')).toBe(1)

    const opened = await callTool(client, 'terminal_open', { type: 'shell' })
    expect(opened.isError).toBe(false)
    const sessionId = opened.meta.sessionId as string
    expect(await callTool(client, 'terminal_send', { sessionId, text: 'echo metric-$((6*7))' })).toMatchObject({
      isError: false,
      meta: { waitReason: 'stdin_read' },
    })
    const refused = await callTool(client, 'terminal_open', { type: 'shell', cwd: '/' })
    expect(refused).toMatchObject({ isError: true, meta: { error: { code: 'CWD_OUTSIDE_WORKSPACE' } } })

    const after = (await scrape(server)).families
    expect(seriesValue(after, 'dsh_terminal_tool_calls_total', { tool: 'terminal_open', outcome: 'ok' })).toBe(1)
    expect(seriesValue(after, 'dsh_terminal_tool_calls_total', { tool: 'terminal_open', outcome: 'error' })).toBe(1)
    expect(seriesValue(after, 'dsh_terminal_sends_total', { wait_reason: 'stdin_read' })).toBe(1)
    expect(seriesValue(after, 'dsh_terminal_send_duration_seconds_count', { wait_reason: 'stdin_read' })).toBe(1)
    expect(seriesValue(after, 'dsh_terminal_send_duration_seconds_sum', { wait_reason: 'stdin_read' })).toBeGreaterThan(0)
    expect(seriesValue(after, 'dsh_terminal_sandbox_refusals_total', { code: 'CWD_OUTSIDE_WORKSPACE' })).toBe(1)
    expect(seriesValue(after, 'dsh_terminal_output_bytes_total', { tool: 'terminal_send' })).toBeGreaterThan(0)
    expect(seriesValue(after, 'dsh_terminal_sessions', { state: 'open' })).toBe(1)
    expect(seriesValue(after, 'dsh_terminal_jobs', { status: 'running' })).toBe(0)

    // A read -s answered by the agent, then one answered by a person who took over.
    await callTool(client, 'terminal_send', { sessionId, text: "read -s -p 'password: ' A; echo done-a" })
    await callTool(client, 'terminal_send', { sessionId, text: AGENT_SECRET })
    await callTool(client, 'terminal_send', { sessionId, text: "read -s -p 'password: ' B; echo done-b" })
    const gateway = new HumanGateway(composition.root)
    let seen = ''
    const view = await gateway.attach(sessionId, { onOutput: (bytes) => (seen += Buffer.from(bytes).toString('utf8')), onEnd: () => {} }, HUMAN_CLIENTS.web)
    view.takeWrite()
    await view.write(`${HUMAN_SECRET}\r`)
    await eventually(() => seen.includes('done-b'), 'the person’s answer to reach the shell')
    const during = await scrape(server)
    expect(seriesValue(during.families, 'dsh_terminal_human_events_total', { kind: 'takeover' })).toBe(1)
    expect(seriesValue(during.families, 'dsh_terminal_human_events_total', { kind: 'secret_handoff' })).toBe(1)
    expect(seriesValue(during.families, 'dsh_terminal_sessions', { state: 'human_attached' })).toBe(1)
    expect(seriesValue(during.families, 'dsh_terminal_sends_total', { wait_reason: 'stdin_read' })).toBe(4)
    view.close()

    // A background send is counted as one, and its job shows among the jobs.
    await callTool(client, 'terminal_send', { sessionId, text: 'sleep 30', run_in_background: true })
    const last = await scrape(server)
    expect(seriesValue(last.families, 'dsh_terminal_sends_total', { wait_reason: 'background' })).toBe(1)
    expect(seriesValue(last.families, 'dsh_terminal_jobs', { status: 'running' })).toBe(1)
    for (const text of [before.text, during.text, last.text]) {
      expect(text).not.toContain(AGENT_SECRET)
      expect(text).not.toContain(HUMAN_SECRET)
    }
  })

  it("counts the allowlist network's egress refusals by reason and protocol, never by host", async () => {
    const server = await serve()
    const refusal = { host: 'refused.example', port: 443, protocol: 'http', reason: 'NOT_ALLOWED', detail: 'refused.example:443 is not on the list' } as const
    expect(seriesValue((await scrape(server)).families, 'dsh_terminal_egress_refusals_total', { reason: 'NOT_ALLOWED', protocol: 'http' })).toBeUndefined()
    composition.root.emit('sandbox/egress-refused', refusal)
    composition.root.emit('sandbox/egress-refused', refusal)
    composition.root.emit('sandbox/egress-refused', { ...refusal, protocol: 'socks5', reason: 'FORBIDDEN_ADDRESS' })
    const { families, text } = await scrape(server)
    expect(seriesValue(families, 'dsh_terminal_egress_refusals_total', { reason: 'NOT_ALLOWED', protocol: 'http' })).toBe(2)
    expect(seriesValue(families, 'dsh_terminal_egress_refusals_total', { reason: 'FORBIDDEN_ADDRESS', protocol: 'socks5' })).toBe(1)
    expect(text).not.toContain('refused.example')
  })

  it('asks for the bearer token unless told otherwise, and keeps two hosts in one process apart', async () => {
    const guarded = await serve()
    const refused = await fetch(metricsUrl(guarded))
    expect(refused.status).toBe(401)
    expect(((await refused.json()) as { error: { data: { code: string } } }).error.data.code).toBe('UNAUTHORIZED')
    expect((await fetch(metricsUrl(guarded), { headers: { Authorization: 'Bearer wrong-token-0123456789' } })).status).toBe(401)

    // A second host on the same composition: its own registry (the global one would refuse the names twice).
    const open = await serve('open')
    const { client } = await connectHttp(open.url, TOKEN)
    clients.push(client)
    await callTool(client, 'terminal_list')
    const openFamilies = (await scrape(open, null)).families
    const guardedFamilies = (await scrape(guarded)).families
    expect(seriesValue(openFamilies, 'dsh_terminal_tool_calls_total', { tool: 'terminal_list', outcome: 'ok' })).toBe(1)
    expect(seriesValue(guardedFamilies, 'dsh_terminal_tool_calls_total', { tool: 'terminal_list', outcome: 'ok' })).toBe(1)
    // Only /metrics is open: the MCP endpoint still wants the token.
    expect((await fetch(open.url, { method: 'POST' })).status).toBe(401)

    const off = await serve('off')
    expect((await fetch(metricsUrl(off), { headers: { Authorization: `Bearer ${TOKEN}` } })).status).toBe(404)
  })
})

describe('--metrics PORT of the stdio host', () => {
  it('serves the same metrics on 127.0.0.1 only, at /metrics only', async () => {
    const metrics = HostMetrics.attach(composition)
    const server = await startMetricsServer(metrics, 0)
    try {
      expect(server.url).toBe(`http://127.0.0.1:${server.port}/metrics`)
      const agent = await composition.agents.create()
      await composition.tools.execute({ callId: 'm1', name: 'job_list', arguments: {}, agent })
      const response = await fetch(server.url)
      expect(response.status).toBe(200)
      const families = parsePrometheusText(await response.text())
      expect(seriesValue(families, 'dsh_terminal_tool_calls_total', { tool: 'job_list', outcome: 'ok' })).toBe(1)
      expect((await fetch(server.url.replace('/metrics', '/mcp'))).status).toBe(404)
      expect((await fetch(server.url, { headers: { Origin: 'http://evil.example' } })).status).toBe(403)
      expect((await fetch(server.url, { method: 'POST' })).status).toBe(405)
      await agent.dispose()
    } finally {
      await server.close()
      metrics.close()
    }
  })
})

describe('the strict exposition parser of these tests', () => {
  it('refuses what a Prometheus scraper would', () => {
    const good = '# HELP a_total A counter.\n# TYPE a_total counter\na_total{x="1"} 2\n'
    expect(seriesValue(parsePrometheusText(good), 'a_total', { x: '1' })).toBe(2)
    const bad = [
      good.slice(0, -1), // no final newline
      '# TYPE a counter\na -1\n', // negative counter
      'a 1\n', // no TYPE or HELP before it
      '# TYPE a gauge\na{x="1} 1\n', // unterminated label value
      '# TYPE a gauge\na{x="1"}  1\n', // two spaces
      '# TYPE a gauge\na{x="1"} one\n', // not a float
      '# TYPE a gauge\na 1\na 2\n', // a series twice
      '# TYPE a gauge\n# TYPE b gauge\nb 1\na 1\n', // a family outside its group
      '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n', // not cumulative
      '# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n', // no +Inf
      '# TYPE a spline\n', // unknown type
    ]
    for (const text of bad) expect(() => parsePrometheusText(text), JSON.stringify(text)).toThrow()
  })
})

describe('dsh-terminal mcp --metrics PORT (the command)', () => {
  it('prints where the metrics are, counts the stdio client’s calls there, and exits 0 at EOF', async () => {
    const running = start(TSX, [...CLI_ARGS, 'mcp', '--config', SNAPSHOT_CONFIG, '--metrics', '0'])
    try {
      const url = await eventually(() => /Prometheus metrics at (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(running.stderr())?.[1], 'the metrics URL on stderr')
      running.child.stdin.write(HANDSHAKE)
      running.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'terminal_list', arguments: {} } })}\n`)
      await running.waitForStdout((stdout) => jsonRpcLines(stdout).some((message) => message.id === 2))
      const families = parsePrometheusText(await (await fetch(url)).text())
      expect(seriesValue(families, 'dsh_terminal_tool_calls_total', { tool: 'terminal_list', outcome: 'ok' })).toBe(1)
      expect(seriesValue(families, 'dsh_terminal_agents')).toBe(1)
    } finally {
      running.child.stdin.end()
    }
    expect((await running.finished).code).toBe(0)
  })

  it('is a usage error with --http or headless, and --metrics-without-token only goes with --http', () => {
    expect(parseCliArgs(['mcp', '--metrics', '9100'])).toMatchObject({ kind: 'run', metrics: 9100 })
    expect(parseCliArgs(['--http', '8080', '--metrics-without-token'])).toMatchObject({ kind: 'run', metricsWithoutToken: true })
    expect(parseCliArgs(['--http', '8080', '--metrics', '9100'])).toMatchObject({
      kind: 'usage-error',
      message: expect.stringMatching(/--http serves \/metrics/),
    })
    expect(parseCliArgs(['headless', '--metrics', '9100'])).toMatchObject({ kind: 'usage-error' })
    expect(parseCliArgs(['mcp', '--metrics', 'many'])).toMatchObject({ kind: 'usage-error', message: '--metrics wants a port number (0-65535), not "many"' })
    expect(parseCliArgs(['mcp', '--metrics-without-token'])).toMatchObject({ kind: 'usage-error', message: '--metrics-without-token goes with --http' })
  })
})
