import { randomBytes } from 'node:crypto'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { commandLine, descendants, eventually, identify, type ProcessIdentity, stillRunning } from 'dsh-testkit'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { TOKEN_ENV } from '../src/mcp/http-auth'
import { ALL_TOOLS, CLI_ARGS, DEFAULT_CONFIG, SNAPSHOT_CONFIG, tempDir, TSX } from './helpers'
import { callTool, connectHttp, type HttpClient } from './mcp-clients'
import { type Running, start } from './process'

/** Start `dsh-terminal <args>` from sources, with `env` added to this process's environment. */
function startCli(args: string[], cwd: string, env: Record<string, string> = {}): Running {
  const saved = { ...process.env }
  Object.assign(process.env, env)
  try {
    return start(TSX, [...CLI_ARGS, ...args], cwd)
  } finally {
    for (const name of Object.keys(env)) {
      if (saved[name] === undefined) delete process.env[name]
      else process.env[name] = saved[name]
    }
  }
}

/** The URL the server printed on stderr once it listens. */
function listening(running: Running): Promise<string> {
  return eventually(() => /listening on (http:\/\/\S+)/.exec(running.stderr())?.[1], `the server to listen; stderr:\n${running.stderr()}`, 30_000)
}

const connect = connectHttp

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const { isError, text } = await callTool(client, name, args)
  if (isError) throw new Error(`${name} failed: ${text}`)
  return text
}

/** Open a shell with `sleep <seconds> &` in it; resolves with the session id and its process tree once the sleep runs. */
async function shellWithSleeper(client: Client, seconds: number): Promise<{ sessionId: string; tree: ProcessIdentity[] }> {
  const { meta } = await callTool(client, 'terminal_open', { type: 'shell' })
  const { sessionId, pid } = meta as { sessionId: string; pid: number }
  await call(client, 'terminal_send', { sessionId, text: `sleep ${seconds} &` })
  const tree = await eventually(() => {
    const found = [identify(pid), ...descendants(pid)].filter((member): member is ProcessIdentity => member !== undefined)
    return found.some((member) => commandLine(member.pid)?.join(' ') === `sleep ${seconds}`) && found
  }, `sleep ${seconds} to run`)
  return { sessionId, tree }
}

/**
 * The CLI as a child process serving the default composition (real bash in bubblewrap) over HTTP on
 * loopback, driven by the SDK's Streamable HTTP client; every check of "nothing left" reads /proc.
 */
describe.skipIf(process.platform !== 'linux')('end to end: real bash over MCP Streamable HTTP', () => {
  const token = randomBytes(24).toString('base64url')
  let server: Running
  let url: string
  let workspace: { dir: string; remove: () => Promise<void> }
  let first: HttpClient

  beforeAll(async () => {
    workspace = await tempDir('dsh-host-http-')
    server = startCli(['mcp', '--http', '127.0.0.1:0', '--idle-timeout', '1s', '--config', DEFAULT_CONFIG], workspace.dir, { [TOKEN_ENV]: token })
    url = await listening(server)
    first = await connect(url, token)
  })

  afterAll(async () => {
    if (server.child.exitCode === null) server.child.kill('SIGTERM')
    await server.finished
    await workspace.remove()
  })

  it('serves the default composition; echo works and the token never reaches a shell', async () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
    expect(server.stderr()).toContain(`token: from ${TOKEN_ENV}`)
    expect(server.stderr()).not.toContain(token)
    const { tools } = await first.client.listTools()
    expect(tools.map((tool) => tool.name).sort()).toEqual(ALL_TOOLS)
    const sessionId = (await callTool(first.client, 'terminal_open', { type: 'shell', name: 'main' })).meta.sessionId as string
    expect(await call(first.client, 'terminal_send', { sessionId, text: 'echo "hello-$((6*7))"' })).toMatch(/^echo "hello-\$\(\(6\*7\)\)"\nhello-42\n/)
    // The host drops the variable at startup, and the environment scrub drops DSH_* names anyway.
    const probe = `echo "token=\${${TOKEN_ENV}:-unset} names=$(env | grep -c '^${TOKEN_ENV}=') values=$(env | grep -c -F -e '${token}')"`
    expect(await call(first.client, 'terminal_send', { sessionId, text: probe })).toContain('\ntoken=unset names=0 values=0\n')
    expect(await call(first.client, 'terminal_close', { sessionId })).toBe(`closed terminal session ${sessionId}`)
  })

  it("closes a dropped client's sessions after the idle timeout: no process of it is left", async () => {
    const { client } = await connect(url, token)
    const { tree } = await shellWithSleeper(client, 301)
    await client.close() // no DELETE: requests and the GET stream are aborted, as when a client dies
    await eventually(() => tree.filter(stillRunning).length === 0, 'the idle session to close', 20_000)
    // The server says so once the close has completed, which is after the last process is gone.
    const closed = /session \S+ closed \(idle for 1 s\): its terminals and jobs are closed/
    await eventually(() => closed.test(server.stderr()), 'the idle close to be logged', 5_000)
  })

  it('DELETE closes the session at once; its id is then unknown (404)', async () => {
    const { client, transport } = await connect(url, token)
    const ended = transport.sessionId!
    const { tree } = await shellWithSleeper(client, 302)
    await transport.terminateSession()
    expect(tree.filter(stillRunning)).toEqual([])
    await client.close()
    const stale = await connect(url, token, ended)
    await expect(stale.client.listTools()).rejects.toMatchObject({ code: 404 })
    await stale.client.close()
  })

  it('SIGTERM closes every session and exits 0 with nothing left running', async () => {
    // The first client kept its GET stream open all along, so it was never idle.
    expect(await call(first.client, 'terminal_list', {})).toBe('(no terminal sessions)')
    const { tree } = await shellWithSleeper(first.client, 303)
    const everything = descendants(server.child.pid!)
    server.child.kill('SIGTERM')
    const done = await server.finished
    expect(done.code, done.stderr).toBe(0)
    expect(done.stdout).toBe('')
    expect([...tree, ...everything].filter(stillRunning)).toEqual([])
    expect(done.stderr).toMatch(/closed \(server shutting down\)/)
    await first.client.close()
  })
})

describe('dsh-terminal mcp --http', () => {
  const running: Running[] = []
  /** A server stopped after the test whatever happens in it. */
  function started(args: string[], cwd: string, env: Record<string, string> = {}): Running {
    const server = startCli(['mcp', ...args], cwd, env)
    running.push(server)
    return server
  }
  afterEach(async () => {
    for (const server of running.splice(0)) {
      if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGTERM')
      await server.finished
    }
  })

  it('prints a generated token and the URL of a free port, serves with it, and exits 0 on SIGTERM', async () => {
    const server = started(['--http', '[::1]:0', '--config', SNAPSHOT_CONFIG], process.cwd(), { [TOKEN_ENV]: '' })
    const url = await listening(server)
    expect(url).toMatch(/^http:\/\/\[::1\]:\d+\/mcp$/)
    const token = /token: (\S+) {2}\(generated/.exec(server.stderr())![1]!
    expect(server.stderr()).toContain(`claude mcp add --transport http dsh-terminal ${url} --header "Authorization: Bearer ${token}"`)
    const { client } = await connect(url, token)
    expect(await call(client, 'terminal_open', { type: 'snapshot' })).toMatch(/^started terminal session pty-1/)
    server.child.kill('SIGTERM')
    const done = await server.finished
    expect(done).toMatchObject({ code: 0, stdout: '' })
    await client.close()
  })

  it('keeps the token from shells by the environment scrub alone, too (headless leaves it in its own environment)', async () => {
    const token = randomBytes(24).toString('base64url')
    const headless = startCli(['headless', '--config', DEFAULT_CONFIG], process.cwd(), { [TOKEN_ENV]: token })
    const send = `echo "token=\${${TOKEN_ENV}:-unset} values=$(env | grep -c -F -e '${token}')"`
    headless.child.stdin.end(
      `${JSON.stringify({ id: 1, tool: 'terminal_open', arguments: { type: 'shell' } })}\n${JSON.stringify({ id: 2, tool: 'terminal_send', arguments: { sessionId: 'pty-1', text: send } })}\n`,
    )
    const done = await headless.finished
    expect(done.code).toBe(0)
    const lines = done.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { text: string })
    expect(lines[1]!.text).toContain('\ntoken=unset values=0\n')
  })

  it('closes a dropped client that holds no work after the quiet timeout, and keeps one whose terminal runs a command', async () => {
    const token = randomBytes(24).toString('base64url')
    const workspace = await tempDir('dsh-host-quiet-')
    try {
      const server = started(['--http', '127.0.0.1:0', '--idle-timeout', '60s', '--idle-timeout-quiet', '1s', '--config', DEFAULT_CONFIG], workspace.dir, {
        [TOKEN_ENV]: token,
      })
      const url = await listening(server)
      expect(server.stderr()).toContain('after 1 s without a request or open stream (1 min while a terminal runs a command')
      // Busy: `sleep` in front when the client goes (the send gave up at its timeout).
      const busy = await connect(url, token)
      const { meta } = await callTool(busy.client, 'terminal_open', { type: 'shell' })
      const busyShell = (meta as { pid: number }).pid
      await callTool(busy.client, 'terminal_send', { sessionId: (meta as { sessionId: string }).sessionId, text: 'sleep 600', timeoutMs: 500 })
      const busyId = `${busy.transport.sessionId!.slice(0, 8)}…`
      // Quiet: a shell at its prompt, with a background sleeper to prove the whole tree goes.
      const quiet = await connect(url, token)
      const { tree } = await shellWithSleeper(quiet.client, 304)
      const quietId = `${quiet.transport.sessionId!.slice(0, 8)}…`
      await busy.client.close()
      await quiet.client.close()
      await eventually(() => tree.filter(stillRunning).length === 0, 'the quiet session to close', 20_000)
      await eventually(
        () => server.stderr().includes(`session ${quietId} closed (idle for 1 s, with no busy terminal, running job or person attached)`),
        'the quiet close to be logged',
      )
      await eventually(() => server.stderr().includes(`session ${busyId} idle for 1 s but holds work`), 'the busy session to be kept', 20_000)
      expect(server.stderr()).not.toContain(`session ${busyId} closed`)
      expect(stillRunning(identify(busyShell)!)).toBe(true)
    } finally {
      await workspace.remove()
    }
  })

  it('refuses a short DSH_TERMINAL_TOKEN with exit 2 and a port in use with exit 1', async () => {
    const short = await started(['--http', '0', '--config', SNAPSHOT_CONFIG], process.cwd(), { [TOKEN_ENV]: 'short' }).finished
    expect(short).toMatchObject({ code: 2, stdout: '' })
    expect(short.stderr).toContain(`${TOKEN_ENV} must be at least 16 characters`)
    const holder = started(['--http', '127.0.0.1:0', '--config', SNAPSHOT_CONFIG], process.cwd())
    const port = new URL(await listening(holder)).port
    const taken = await started(['--http', `127.0.0.1:${port}`, '--config', SNAPSHOT_CONFIG], process.cwd()).finished
    expect(taken).toMatchObject({ code: 1, stdout: '' })
    expect(taken.stderr).toContain(`cannot listen on 127.0.0.1:${port}: EADDRINUSE; pick another port, or 0 for a free one`)
    holder.child.kill('SIGTERM')
    expect((await holder.finished).code).toBe(0)
  })
})
