import { EventEmitter } from 'node:events'
import type { ServerResponse } from 'node:http'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { eventually } from 'dsh-testkit'
import type { TerminalSessionService } from 'dsh-terminal'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { parseCliArgs } from '../src/cli/args'
import type { Composition } from '../src/compose/load-config'
import type { McpConnection } from '../src/mcp/connection'
import { McpHttpServer } from '../src/mcp/http'
import { endpointUrl, isLoopbackHost, parseDuration, parseListenAddress } from '../src/mcp/http-address'
import { checkBearer, MIN_TOKEN_LENGTH, originAllowed, resolveToken, TOKEN_ENV } from '../src/mcp/http-auth'
import { httpBanner } from '../src/mcp/http-command'
import { HttpSession, HttpSessions } from '../src/mcp/http-sessions'
import { ALL_TOOLS, load, SNAPSHOT_CONFIG } from './helpers'
import { callTool, connectHttp, type HttpClient } from './mcp-clients'

const TOKEN = 'test-token-0123456789abcdef'

let composition: Composition
let server: McpHttpServer
const clients: Client[] = []

async function serve(options: { idleTimeoutMs?: number; maxSessions?: number } = {}): Promise<McpHttpServer> {
  server = await McpHttpServer.start(composition, { address: { host: '127.0.0.1', port: 0 }, token: TOKEN, ...options })
  return server
}

beforeEach(async () => {
  composition = await load(SNAPSHOT_CONFIG)
})

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()))
  await server?.close()
  await composition.dispose()
  vi.useRealTimers()
})

/** The official SDK client over Streamable HTTP, closed after the test. */
async function connect(token: string | null = TOKEN, sessionId?: string): Promise<HttpClient> {
  const connected = await connectHttp(server.url, token, sessionId)
  clients.push(connected.client)
  return connected
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<{ isError: boolean; text: string }> {
  const { isError, text } = await callTool(client, name, args)
  return { isError, text }
}

/** A raw request to the endpoint, for what the SDK client hides: status, headers and the error body. */
async function raw(
  init: RequestInit & { headers?: Record<string, string> } = {},
): Promise<{ status: number; auth: string | null; code: unknown; message: string }> {
  const response = await fetch(server.url, init)
  const body = (await response.json()) as { error: { message: string; data: { code: string } } }
  return { status: response.status, auth: response.headers.get('www-authenticate'), code: body.error.data.code, message: body.error.message }
}

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
})
const POST_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' }

describe('MCP over Streamable HTTP', () => {
  it('initializes and lists the same tools as stdio, then opens, sends and closes a session', async () => {
    await serve()
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
    const { client } = await connect()
    expect(client.getServerVersion()).toMatchObject({ name: 'dsh-terminal' })
    expect(client.getInstructions()).toMatch(/## Terminal sessions/)
    const { tools } = await client.listTools()
    expect(tools.map((tool) => tool.name).sort()).toEqual(ALL_TOOLS)
    expect(await call(client, 'terminal_open', { type: 'snapshot' })).toMatchObject({
      isError: false,
      text: expect.stringMatching(/^started terminal session pty-1/),
    })
    expect((await call(client, 'terminal_send', { sessionId: 'pty-1', text: 'hi' })).text).toBe('hi\nok: hi\n[wait: stdin_read]\n[exit: 0]\n[session: running]')
    expect(await call(client, 'terminal_close', { sessionId: 'pty-1' })).toEqual({ isError: false, text: 'closed terminal session pty-1' })
    expect(server.sessionCount).toBe(1)
  })

  it('gives each MCP session its own agent: concurrent clients cannot see or drive each other', async () => {
    await serve()
    const [first, second] = await Promise.all([connect(), connect()])
    expect(first.transport.sessionId).not.toBe(second.transport.sessionId)
    expect(composition.agents.list()).toHaveLength(2)
    await call(first.client, 'terminal_open', { type: 'snapshot', name: 'mine' })
    expect((await call(second.client, 'terminal_list')).text).toBe('(no terminal sessions)')
    for (const [name, args] of [
      ['terminal_send', { sessionId: 'pty-1', text: 'hi' }],
      ['terminal_read', { sessionId: 'pty-1' }],
      ['terminal_close', { sessionId: 'pty-1' }],
    ] as const) {
      expect(await call(second.client, name, args)).toEqual({ isError: true, text: 'Error: PTY session pty-1 belongs to another agent' })
    }
    const [mine, theirs] = await Promise.all([
      call(first.client, 'terminal_send', { sessionId: 'pty-1', text: 'one' }),
      call(second.client, 'terminal_open', { type: 'snapshot' }),
    ])
    expect(mine.text).toBe('one\nok: one\n[wait: stdin_read]\n[exit: 0]\n[session: running]')
    expect(theirs.text).toMatch(/^started terminal session pty-2/)
    expect((await call(first.client, 'terminal_list')).text).toMatch(/^pty-1 \(mine\) \[snapshot\] running/)
  })

  it('answers a missing or bad token with 401 and WWW-Authenticate: Bearer, to the SDK client and on the wire', async () => {
    await serve()
    await expect(connect(null)).rejects.toMatchObject({ code: 401 })
    await expect(connect('not-the-token-at-all')).rejects.toMatchObject({ code: 401 })
    const missing = await raw({ method: 'POST', headers: POST_HEADERS, body: INITIALIZE })
    expect(missing).toMatchObject({
      status: 401,
      auth: 'Bearer realm="dsh-terminal"',
      code: 'UNAUTHORIZED',
      message: expect.stringMatching(/^missing bearer token: send "Authorization: Bearer <token>"/),
    })
    const bad = await raw({ method: 'POST', headers: { ...POST_HEADERS, Authorization: `Bearer ${TOKEN}x` }, body: INITIALIZE })
    expect(bad).toMatchObject({
      status: 401,
      auth: 'Bearer realm="dsh-terminal", error="invalid_token"',
      code: 'UNAUTHORIZED',
      message: expect.stringMatching(/^invalid bearer token/),
    })
    expect(await raw({ method: 'POST', headers: { ...POST_HEADERS, Authorization: `Basic ${TOKEN}` }, body: INITIALIZE })).toMatchObject({ status: 401 })
    expect(composition.agents.list()).toEqual([])
  })

  it('answers an unknown or ended Mcp-Session-Id with 404, and refuses a non-loopback Origin', async () => {
    await serve()
    const { client, transport } = await connect()
    const ended = transport.sessionId!
    await call(client, 'terminal_open', { type: 'snapshot' })
    await transport.terminateSession()
    const stale = await connect(TOKEN, ended)
    await expect(stale.client.callTool({ name: 'terminal_list', arguments: {} })).rejects.toMatchObject({ code: 404 })
    const unknown = await raw({
      method: 'POST',
      headers: { ...POST_HEADERS, Authorization: `Bearer ${TOKEN}`, 'Mcp-Session-Id': 'no-such-session' },
      body: INITIALIZE,
    })
    expect(unknown).toMatchObject({
      status: 404,
      code: 'UNKNOWN_SESSION',
      message: expect.stringMatching(/^unknown MCP session no-such-session: .* start a new session with initialize/),
    })
    const authorized = { Authorization: `Bearer ${TOKEN}` }
    expect(await raw({ method: 'GET', headers: authorized })).toMatchObject({ status: 400, code: 'SESSION_REQUIRED' })
    const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
    expect(await raw({ method: 'POST', headers: { ...POST_HEADERS, ...authorized }, body: list })).toMatchObject({ status: 400, code: 'SESSION_REQUIRED' })
    expect(await raw({ method: 'POST', headers: { ...POST_HEADERS, ...authorized, Origin: 'http://evil.example' }, body: INITIALIZE })).toMatchObject({
      status: 403,
      code: 'FORBIDDEN_ORIGIN',
    })
    expect(await raw({ method: 'POST', headers: { ...POST_HEADERS, ...authorized, Origin: 'null' }, body: INITIALIZE })).toMatchObject({ status: 403 })
    expect((await fetch(server.url.replace('/mcp', '/other'), { headers: authorized })).status).toBe(404)
    // A loopback origin passes (a local web UI), and so does none at all (every native client).
    const local = await fetch(server.url, { method: 'POST', headers: { ...POST_HEADERS, ...authorized, Origin: 'http://localhost:3000' }, body: INITIALIZE })
    expect(local.status).toBe(200)
    await fetch(server.url, { method: 'DELETE', headers: { ...authorized, 'Mcp-Session-Id': local.headers.get('mcp-session-id')! } })
    expect(composition.agents.list()).toEqual([])
  })

  it('DELETE closes the session, its terminals and its jobs before it is answered', async () => {
    await serve()
    const terminals = composition.root.get('terminals') as TerminalSessionService
    const { client, transport } = await connect()
    await call(client, 'terminal_open', { type: 'snapshot' })
    expect((await call(client, 'terminal_send', { sessionId: 'pty-1', text: 'sleep', run_in_background: true })).text).toBe('started background job pty-send-1')
    const [agent] = composition.agents.list()
    expect(terminals.hasOwnerActivity(agent!)).toBe(true)
    await transport.terminateSession()
    expect(agent!.live).toBe(false)
    expect(terminals.hasOwnerActivity(agent!)).toBe(false)
    expect(server.sessionCount).toBe(0)
  })

  it("closes a dropped client's session after the idle timeout, with its terminals and jobs", async () => {
    await serve({ idleTimeoutMs: 50 })
    const terminals = composition.root.get('terminals') as TerminalSessionService
    const { client } = await connect()
    await call(client, 'terminal_open', { type: 'snapshot' })
    await call(client, 'terminal_send', { sessionId: 'pty-1', text: 'sleep', run_in_background: true })
    const [agent] = composition.agents.list()
    // Drop without DELETE: the client aborts its requests and its GET stream, as a crashed one would.
    await client.close()
    await eventually(() => server.sessionCount === 0 && !agent!.live, 'the idle session to close')
    expect(terminals.hasOwnerActivity(agent!)).toBe(false)
    expect(composition.agents.list()).toEqual([])
  })

  it('refuses an initialize beyond the session cap with 503, and closes every session on close()', async () => {
    await serve({ maxSessions: 2 })
    await connect()
    const { client } = await connect()
    await call(client, 'terminal_open', { type: 'snapshot' })
    const refused = await raw({ method: 'POST', headers: { ...POST_HEADERS, Authorization: `Bearer ${TOKEN}` }, body: INITIALIZE })
    expect(refused).toMatchObject({ status: 503, code: 'TOO_MANY_SESSIONS', message: expect.stringContaining('end one (DELETE)') })
    await server.close()
    expect(server.sessionCount).toBe(0)
    expect(composition.agents.list()).toEqual([])
  })
})

describe('idle accounting', () => {
  it('starts the idle timer only when the last open request or stream ends', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const table = new HttpSessions({ composition: {} as Composition, idleTimeoutMs: 1000, maxSessions: 1 })
    let closed = 0
    const connection = { close: async () => void closed++ } as unknown as McpConnection
    const session = new HttpSession({ sessionId: 'abc' } as StreamableHTTPServerTransport, connection, table)
    const stream = new EventEmitter() as ServerResponse
    const request = new EventEmitter() as ServerResponse
    session.track(stream)
    session.track(request)
    request.emit('close')
    vi.advanceTimersByTime(5000)
    expect(session.closing).toBe(false)
    stream.emit('close')
    vi.advanceTimersByTime(999)
    expect(session.closing).toBe(false)
    session.track(request)
    request.emit('close')
    vi.advanceTimersByTime(999)
    expect(session.closing).toBe(false)
    vi.advanceTimersByTime(1)
    expect(session.closing).toBe(true)
    await session.close('idle')
    expect(closed).toBe(1)
  })
})

describe('the shorter idle timeout of a session that holds no work', () => {
  function quietTable(holdsWork: () => Promise<boolean>) {
    const lines: string[] = []
    const table = new HttpSessions({
      composition: {} as Composition,
      idleTimeoutMs: 1000,
      quietIdleTimeoutMs: 100,
      holdsWork,
      maxSessions: 1,
      log: (line) => lines.push(line),
    })
    const connection = { agent: {}, close: async () => {} } as unknown as McpConnection
    const session = new HttpSession({ sessionId: 'abc' } as StreamableHTTPServerTransport, connection, table)
    const request = new EventEmitter() as ServerResponse
    session.track(request)
    request.emit('close')
    return { session, lines, request }
  }

  it('closes at the quiet timeout when the agent holds no work', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const { session, lines } = quietTable(async () => false)
    await vi.advanceTimersByTimeAsync(99)
    expect(session.closing).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    expect(session.closing).toBe(true)
    await session.close('quiet')
    expect(lines.at(-1)).toMatch(/closed \(idle for 0.1 s, with no busy terminal, running job or person attached\)/)
  })

  it('keeps a session that holds work to the full idle timeout, and says so', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const { session, lines } = quietTable(async () => true)
    await vi.advanceTimersByTimeAsync(100)
    expect(session.closing).toBe(false)
    expect(lines.at(-1)).toMatch(/idle for 0.1 s but holds work .*: kept up to 1 s/)
    await vi.advanceTimersByTimeAsync(899)
    expect(session.closing).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    expect(session.closing).toBe(true)
  })

  it('a request that comes while the look runs decides: the session stays', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    let answer!: (busy: boolean) => void
    const { session, request } = quietTable(() => new Promise((resolve) => (answer = resolve)))
    await vi.advanceTimersByTimeAsync(100)
    session.track(request)
    answer(false)
    await vi.advanceTimersByTimeAsync(5000)
    expect(session.closing).toBe(false)
  })
})

describe('HTTP options, token and origin', () => {
  it('parses --http and --idle-timeout: loopback unless told, IPv6 in brackets, usage errors otherwise', () => {
    expect(parseListenAddress('8080')).toEqual({ host: '127.0.0.1', port: 8080 })
    expect(parseListenAddress('0')).toEqual({ host: '127.0.0.1', port: 0 })
    expect(parseListenAddress('0.0.0.0:8080')).toEqual({ host: '0.0.0.0', port: 8080 })
    expect(parseListenAddress('[::1]:9')).toEqual({ host: '::1', port: 9 })
    expect(parseListenAddress('localhost:1')).toEqual({ host: 'localhost', port: 1 })
    expect(() => parseListenAddress('::1:80')).toThrow(/write an IPv6 address in brackets: \[::1\]:80/)
    for (const bad of ['', 'abc', '70000', ':80', '[nope]:1', 'a b:1']) expect(() => parseListenAddress(bad)).toThrow(/^--http wants a port/)
    expect([parseDuration('30m'), parseDuration('90s'), parseDuration('90'), parseDuration('250ms'), parseDuration('1h'), parseDuration('0')]).toEqual([
      1_800_000, 90_000, 90_000, 250, 3_600_000, 0,
    ])
    expect(() => parseDuration('soon')).toThrow(/--idle-timeout wants a duration/)
    expect(parseCliArgs(['mcp', '--http', '[::1]:0', '--idle-timeout', '5m'])).toEqual({
      kind: 'run',
      command: 'mcp',
      http: { host: '::1', port: 0 },
      idleTimeoutMs: 300_000,
    })
    expect(parseCliArgs(['headless', '--http', '8080'])).toEqual({ kind: 'usage-error', message: '--http and --idle-timeout belong to mcp, not headless' })
    expect(parseCliArgs(['mcp', '--idle-timeout', '5m'])).toMatchObject({ kind: 'usage-error', message: expect.stringMatching(/needs --http/) })
    expect(parseCliArgs(['mcp', '--http', '0', '--idle-timeout-quiet', '90s'])).toMatchObject({ kind: 'run', quietIdleTimeoutMs: 90_000 })
    expect(parseCliArgs(['mcp', '--idle-timeout-quiet', '90s'])).toMatchObject({ kind: 'usage-error', message: expect.stringMatching(/needs --http/) })
    expect(parseCliArgs(['mcp', '--http', 'x'])).toMatchObject({ kind: 'usage-error' })
    expect(endpointUrl({ host: '::1', port: 80 })).toBe('http://[::1]:80/mcp')
    expect(endpointUrl({ host: '0.0.0.0', port: 80 })).toBe('http://127.0.0.1:80/mcp')
  })

  it('takes the token from the environment (and removes it there) or generates a fresh one', () => {
    const env: NodeJS.ProcessEnv = { [TOKEN_ENV]: TOKEN }
    expect(resolveToken(env)).toEqual({ value: TOKEN, source: 'environment' })
    expect(env[TOKEN_ENV]).toBeUndefined()
    const [one, two] = [resolveToken({}), resolveToken({ [TOKEN_ENV]: '' })]
    expect(one.source).toBe('generated')
    expect(one.value).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(two.value).not.toBe(one.value)
    expect(() => resolveToken({ [TOKEN_ENV]: 'short' })).toThrow(`${TOKEN_ENV} must be at least ${MIN_TOKEN_LENGTH} characters`)
    expect(checkBearer({ authorization: `Bearer ${TOKEN}` }, TOKEN)).toBeUndefined()
    expect(checkBearer({ authorization: `bearer  ${TOKEN} ` }, TOKEN)).toBeUndefined()
    expect(checkBearer({}, TOKEN)).toBe('missing')
    expect(checkBearer({ authorization: `Bearer ${TOKEN.slice(0, -1)}` }, TOKEN)).toBe('invalid')
    expect(checkBearer({ authorization: TOKEN }, TOKEN)).toBe('invalid')
  })

  it('admits only loopback origins, or none', () => {
    for (const origin of [undefined, 'http://localhost:3000', 'http://127.0.0.1', 'https://[::1]:8443', 'http://app.localhost'])
      expect(originAllowed(origin)).toBe(true)
    for (const origin of ['null', 'http://evil.example', 'http://127.0.0.1.evil.example', 'file://', 'http://10.0.0.1', 'garbage'])
      expect(originAllowed(origin)).toBe(false)
    expect(isLoopbackHost('127.1.2.3')).toBe(true)
    expect(isLoopbackHost('0.0.0.0')).toBe(false)
  })

  it('prints the URL, the token and the Claude Code command; never the value of an environment token', () => {
    const facts = {
      url: 'http://127.0.0.1:8080/mcp',
      bound: { host: '127.0.0.1', port: 8080 },
      idleTimeoutMs: 1_800_000,
      configPath: '/c.yml',
      workspace: '/w',
    }
    const generated = httpBanner({ ...facts, token: { value: 'tok', source: 'generated' } })
    expect(generated).toContain('listening on http://127.0.0.1:8080/mcp\n  token: tok  (generated')
    expect(generated).toContain('claude mcp add --transport http dsh-terminal http://127.0.0.1:8080/mcp --header "Authorization: Bearer tok"')
    expect(generated).toContain('after 30 min without a request or open stream')
    expect(generated).not.toContain('warning')
    const fixed = httpBanner({ ...facts, token: { value: 'secret-from-env', source: 'environment' } })
    expect(fixed).not.toContain('secret-from-env')
    expect(fixed).toContain(`--header "Authorization: Bearer $${TOKEN_ENV}"`)
    expect(generated).toContain(
      'codex mcp add dsh-terminal --url http://127.0.0.1:8080/mcp --bearer-token-env-var DSH_TERMINAL_TOKEN; Codex must run with DSH_TERMINAL_TOKEN=tok',
    )
    // JSON expands no variables: an environment token leaves a placeholder to replace, and says so.
    const json = JSON.parse(/\{"mcpServers".*\}/.exec(fixed)![0]) as { mcpServers: Record<string, { headers: Record<string, string> }> }
    expect(json.mcpServers['dsh-terminal']!.headers.Authorization).toBe(`Bearer <${TOKEN_ENV}>`)
    expect(fixed).toContain(`write the value of ${TOKEN_ENV} for <${TOKEN_ENV}>`)
    expect(fixed).toContain(`codex mcp add dsh-terminal --url http://127.0.0.1:8080/mcp --bearer-token-env-var ${TOKEN_ENV}\n`)
    const wildcard = httpBanner({ ...facts, bound: { host: '0.0.0.0', port: 8080 }, token: { value: 't', source: 'generated' } })
    expect(wildcard).toContain('warning: bound to 0.0.0.0')
    expect(wildcard).toContain('listening on 0.0.0.0:8080 (every interface); on this machine: http://127.0.0.1:8080/mcp')
  })
})
