import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { descendants, processName } from 'dsh-testkit'
import { afterEach, describe, expect, it } from 'vitest'
import type { Composition } from '../src/compose/load-config'
import { McpHttpServer } from '../src/mcp/http'
import { READY_CACHE_MS, ReadinessProbe } from '../src/mcp/probes'
import { DEFAULT_CONFIG, load } from './helpers'
import { connectHttp } from './mcp-clients'

const TOKEN = 'probe-test-token-0123456789abcdef'

const compositions: Composition[] = []
const servers: McpHttpServer[] = []
const clients: Client[] = []

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()))
  for (const server of servers.splice(0)) await server.close()
  for (const composition of compositions.splice(0)) await composition.dispose()
})

async function serve(maxSessions?: number): Promise<McpHttpServer> {
  // The default composition: a real sandboxed bash is what /readyz opens.
  const composition = await load(DEFAULT_CONFIG)
  compositions.push(composition)
  const server = await McpHttpServer.start(composition, { address: { host: '127.0.0.1', port: 0 }, token: TOKEN, ...(maxSessions ? { maxSessions } : {}) })
  servers.push(server)
  return server
}

/** A probe without a token, as a kubelet sends it. */
async function probe(server: McpHttpServer, path: string, method = 'GET'): Promise<{ status: number; text: string }> {
  const response = await fetch(server.url.replace(/\/mcp$/, path), { method })
  return { status: response.status, text: await response.text() }
}

describe('the HTTP host’s probes', () => {
  it('answers /healthz and /readyz without the token, after a real session opened and closed, leaving no process', async () => {
    const server = await serve()
    expect(await probe(server, '/healthz')).toEqual({ status: 200, text: 'ok\n' })
    expect(await probe(server, '/readyz')).toEqual({ status: 200, text: 'ready\n' })
    // The trial session is gone with its agent: nothing of it is left under this process.
    expect(descendants(process.pid).filter((child) => /^(bash|bwrap)$/.test(processName(child.pid) ?? ''))).toEqual([])
    // The MCP endpoint still wants the token.
    expect((await fetch(server.url, { method: 'POST' })).status).toBe(401)
    expect((await probe(server, '/readyz', 'POST')).status).toBe(405)
  })

  it('is not ready at the session cap, with the reason as a code', async () => {
    const server = await serve(1)
    const { client } = await connectHttp(server.url, TOKEN)
    clients.push(client)
    expect(await probe(server, '/readyz')).toEqual({ status: 503, text: 'not ready: AT_CAPACITY\n' })
    expect(await probe(server, '/healthz')).toEqual({ status: 200, text: 'ok\n' })
  })
})

describe('ReadinessProbe', () => {
  /** A composition whose registry counts opens, and fails them while `failing` is set. */
  function fakeComposition(state: { opens: number; failing: boolean; backends: string[] }) {
    const terminals = {
      listBackends: () => state.backends,
      spawn: async () => {
        state.opens += 1
        if (state.failing) throw Object.assign(new Error('sandbox refused'), { code: 'SANDBOX_UNAVAILABLE' })
        return { sessionId: 'pty-1' }
      },
      close: async () => true,
    }
    const agent = { dispose: async () => {} }
    return { root: { get: (name: string) => (name === 'terminals' ? terminals : undefined) }, agents: { create: async () => agent } } as unknown as Composition
  }

  it('says OPEN_FAILED when the trial open fails, reuses a verdict for READY_CACHE_MS, and shares one open between concurrent probes', async () => {
    const state = { opens: 0, failing: true, backends: ['shell'] }
    let now = 0
    const probe = new ReadinessProbe(fakeComposition(state), { shuttingDown: () => false, full: () => false }, () => now)
    expect(await Promise.all([probe.check(), probe.check()])).toEqual([
      { ready: false, reason: 'OPEN_FAILED' },
      { ready: false, reason: 'OPEN_FAILED' },
    ])
    expect(state.opens).toBe(1)
    state.failing = false
    now += READY_CACHE_MS - 1
    expect(await probe.check()).toEqual({ ready: false, reason: 'OPEN_FAILED' })
    now += 1
    expect(await probe.check()).toEqual({ ready: true })
    expect(state.opens).toBe(2)
  })

  it('says NO_TERMINALS without a backend, and SHUTTING_DOWN before anything else', async () => {
    const state = { opens: 0, failing: false, backends: [] }
    expect(await new ReadinessProbe(fakeComposition(state), { shuttingDown: () => false, full: () => false }).check()).toEqual({
      ready: false,
      reason: 'NO_TERMINALS',
    })
    expect(await new ReadinessProbe(fakeComposition(state), { shuttingDown: () => true, full: () => true }).check()).toEqual({
      ready: false,
      reason: 'SHUTTING_DOWN',
    })
    expect(state.opens).toBe(0)
  })
})
