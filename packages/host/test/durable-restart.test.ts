import { readdirSync, readFileSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { commandLine, descendants, eventually, identify, isAlive, processName, stillRunning } from 'dsh-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CLI_ARGS, DEFAULT_CONFIG, REPO_ROOT, tempDir, TSX } from './helpers'
import { callTool } from './mcp-clients'

// Sessions that outlive their host process: `dsh-terminal-mcp` over stdio on examples/durable.yml
// (a private session host socket), SIGKILLed in the middle of a send; a new host process resumes.

let dir: string
let removeDir: () => Promise<void>
const clients: { client: Client; transport: StdioClientTransport }[] = []

async function overlay(name: string, ttlMs: number): Promise<string> {
  const socket = join(dir, name, 'session-host.sock')
  const text = readFileSync(join(REPO_ROOT, 'examples/durable.yml'), 'utf8')
    .replace('path: ../cordis.yml', `path: ${JSON.stringify(DEFAULT_CONFIG)}`)
    .replace(/detachedTtlMs: \d+/, `detachedTtlMs: ${ttlMs}`)
    .replace(/idleExitMs: \d+/, `idleExitMs: 200\n              socketPath: ${JSON.stringify(socket)}`)
  const file = join(dir, `${name}.yml`)
  await writeFile(file, text)
  return file
}

async function host(config: string) {
  const transport = new StdioClientTransport({ command: TSX, args: [...CLI_ARGS, '--config', config], cwd: dir, stderr: 'ignore' })
  const client = new Client({ name: 'dsh-restart-test', version: '1.0.0' })
  await client.connect(transport)
  clients.push({ client, transport })
  return { client, pid: transport.pid as number, call: (name: string, args: Record<string, unknown> = {}) => callTool(client, name, args) }
}

beforeAll(async () => {
  ;({ dir, remove: removeDir } = await tempDir('dsh-restart-'))
})

afterAll(async () => {
  for (const { client } of clients) await client.close().catch(() => undefined)
  // Every host process and, with no terminal left, every session host of these sockets exits.
  await eventually(() => clients.every(({ transport }) => transport.pid === null || !isAlive(transport.pid)), 'the host processes exited')
  await eventually(() => sessionHosts().length === 0, 'the session hosts exited')
  await removeDir?.()
})

/** Live processes whose command line names a socket under this test's directory (its session hosts). */
function sessionHosts(): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => isAlive(pid) && (commandLine(pid) ?? []).some((arg) => arg.startsWith(dir)))
}

describe('a host process SIGKILLed in the middle of a send', () => {
  it('a new host process resumes the session: the send output and end once, env and cwd kept; a second adopter is refused', async () => {
    const config = await overlay('long', 900_000)
    const a = await host(config)
    const opened = await a.call('terminal_open', { type: 'shell', name: 'kept' })
    const sessionId = opened.meta.sessionId as string
    const shell = opened.meta.pid as number
    await a.call('terminal_send', { sessionId, text: 'cd /tmp && export DSH_RESTART=kept' })
    void a.call('terminal_send', { sessionId, text: 'sleep 1; echo finished-$((6*7))' }).catch(() => undefined)
    await eventually(() => descendants(shell).some((child) => processName(child.pid) === 'sleep'), 'the sleep runs')
    process.kill(a.pid, 'SIGKILL')
    await eventually(() => !isAlive(a.pid), 'host A is gone')
    expect(isAlive(shell)).toBe(true)

    const b = await host(config)
    const c = await host(config)
    expect((await b.call('terminal_list')).text).toMatch(new RegExp(`^${sessionId} \\(kept\\) \\[shell\\] running detached \\d+s ago`, 'm'))
    const resumed = await b.call('terminal_open', { type: 'shell', resume: sessionId })
    expect(resumed.isError).toBe(false)
    expect(resumed.text.match(/^finished-42$/gm)).toHaveLength(1)
    expect(resumed.text).toContain('[exit: 0]')
    expect((await c.call('terminal_open', { type: 'shell', resume: sessionId })).meta.error).toMatchObject({ code: 'SESSION_ADOPTED' })
    const state = await b.call('terminal_send', { sessionId, text: 'pwd; echo "$DSH_RESTART"' })
    expect(state.text).toContain('/tmp\nkept\n')
    expect(state.text).not.toContain('finished-42')
    // A new session of the new host never takes the id of a detached one.
    const fresh = (await b.call('terminal_open', { type: 'shell' })).meta.sessionId as string
    expect(fresh).not.toBe(sessionId)
    await b.call('terminal_close', { sessionId: fresh })
    await b.call('terminal_close', { sessionId })
    expect(isAlive(shell)).toBe(false)
  })

  it('keeps the sessions of a host whose client went away gracefully (an MCP client reload)', async () => {
    const config = await overlay('long', 900_000)
    const a = await host(config)
    const opened = await a.call('terminal_open', { type: 'shell', name: 'reloaded' })
    const sessionId = opened.meta.sessionId as string
    const shell = opened.meta.pid as number
    await a.call('terminal_send', { sessionId, text: 'export DSH_RELOAD=kept' })
    await a.client.close()
    await eventually(() => !isAlive(a.pid), 'host A exited')
    expect(isAlive(shell)).toBe(true)
    const b = await host(config)
    const resumed = await b.call('terminal_open', { type: 'shell', resume: sessionId })
    expect(resumed.text.startsWith(`resumed terminal session ${sessionId} (reloaded) [type: shell]`)).toBe(true)
    expect((await b.call('terminal_send', { sessionId, text: 'echo "$DSH_RELOAD"' })).text).toContain('\nkept\n')
    await b.call('terminal_close', { sessionId })
    expect(isAlive(shell)).toBe(false)
  })

  it('closes a detached session with its whole tree when its TTL passes', async () => {
    const config = await overlay('short', 1_000)
    const a = await host(config)
    const opened = await a.call('terminal_open', { type: 'shell' })
    const shell = opened.meta.pid as number
    await a.call('terminal_send', { sessionId: opened.meta.sessionId as string, text: 'sleep 1000 &' })
    const tree = descendants(shell)
    process.kill(a.pid, 'SIGKILL')
    await eventually(() => !isAlive(shell) && tree.every((each) => !stillRunning(each)), 'the detached tree closed at its TTL')
  })
})

describe('a session host SIGKILLed under a live host process', () => {
  it('the next call is SESSION_HOST_LOST, the session leaves terminal_list, nothing of it runs, the next open starts a fresh session host', async () => {
    const config = await overlay('lost', 900_000)
    const a = await host(config)
    const opened = await a.call('terminal_open', { type: 'shell', name: 'doomed' })
    const sessionId = opened.meta.sessionId as string
    const shell = opened.meta.pid as number
    await a.call('terminal_send', { sessionId, text: 'sleep 1000 & echo started' })
    const tree = [identify(shell)!, ...descendants(shell)]
    const [sessionHost] = sessionHosts().filter((pid) => commandLine(pid)?.includes('--socket') && descendants(pid).some((child) => child.pid === shell))
    expect(sessionHost).toBeDefined()
    process.kill(sessionHost!, 'SIGKILL')
    await eventually(() => tree.every((each) => !stillRunning(each)), 'every process of the session is gone')

    const send = await a.call('terminal_send', { sessionId, text: 'true' })
    expect(send.isError).toBe(true)
    expect(send.meta.error).toMatchObject({ code: 'SESSION_HOST_LOST' })
    expect(send.text).toMatch(/session host .* died; every process of the session is gone/)
    expect((await a.call('terminal_list')).text).not.toContain(sessionId)

    const fresh = await a.call('terminal_open', { type: 'shell' })
    expect(fresh.isError).toBe(false)
    const freshShell = fresh.meta.pid as number
    expect(
      sessionHosts().some((pid) => pid !== sessionHost && commandLine(pid)?.includes('--socket') && descendants(pid).some((child) => child.pid === freshShell)),
    ).toBe(true)
    expect((await a.call('terminal_send', { sessionId: fresh.meta.sessionId as string, text: 'echo $((6*7))' })).text).toContain('\n42\n')
    await a.call('terminal_close', { sessionId: fresh.meta.sessionId as string })
  })
})

describe('the input state of a session another host process detached', () => {
  it('terminal_list on the new host shows what it waits for, as the old host showed it, before and after the resume', async () => {
    const config = await overlay('input', 900_000)
    const a = await host(config)
    const opened = await a.call('terminal_open', { type: 'shell', name: 'repl' })
    const sessionId = opened.meta.sessionId as string
    await a.call('terminal_send', { sessionId, text: 'python3 -q' })
    const inputOf = (listing: string) => new RegExp(`^${sessionId} .*?(\\[input: [^\\]]+\\])`, 'm').exec(listing)?.[1]
    const own = inputOf((await a.call('terminal_list')).text)
    expect(own).toMatch(/python/)
    process.kill(a.pid, 'SIGKILL')
    await eventually(() => !isAlive(a.pid), 'host A is gone')

    const b = await host(config)
    const listed = (await b.call('terminal_list')).text
    expect(listed).toMatch(new RegExp(`^${sessionId} \\(repl\\) \\[shell\\] running detached`, 'm'))
    expect(inputOf(listed)).toBe(own)
    await b.call('terminal_open', { type: 'shell', resume: sessionId })
    expect(inputOf((await b.call('terminal_list')).text)).toBe(own)
    expect((await b.call('terminal_send', { sessionId, text: '6*7' })).text).toContain('42')
    await b.call('terminal_close', { sessionId })
  })
})
