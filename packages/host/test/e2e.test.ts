import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ALL_TOOLS, CLI_ARGS, DEFAULT_CONFIG, tempDir, TSX } from './helpers'
import { descendants, eventually, processName, stillRunning } from 'dsh-testkit'

/**
 * The default composition (real bash, bubblewrap, workspace-write) driven through the MCP SDK's own
 * client over stdio, exactly as Claude Code or Codex would: the server is the CLI from sources,
 * started in a fresh workspace directory.
 */
describe.skipIf(process.platform !== 'linux')('end to end: real bash over MCP stdio', () => {
  let client: Client
  let transport: StdioClientTransport
  let workspace: { dir: string; remove: () => Promise<void> }
  let stderr = ''

  beforeAll(async () => {
    workspace = await tempDir('dsh-host-e2e-')
    // The SDK passes a client's server only a few variables; XDG_STATE_HOME too keeps the sessions'
    // private homes in the test run's state directory (scripts/vitest-state-home.ts), not in ~/.local/state.
    const state = process.env.XDG_STATE_HOME
    const env = { ...getDefaultEnvironment(), ...(state === undefined ? {} : { XDG_STATE_HOME: state }) }
    transport = new StdioClientTransport({ command: TSX, args: [...CLI_ARGS, 'mcp', '--config', DEFAULT_CONFIG], cwd: workspace.dir, env, stderr: 'pipe' })
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
    client = new Client({ name: 'dsh-e2e', version: '1.0.0' })
    await client.connect(transport)
  })

  afterAll(async () => {
    await client.close()
    await workspace.remove()
  })

  async function call(name: string, args: Record<string, unknown>): Promise<string> {
    const result = await client.callTool({ name, arguments: args })
    const text = (result.content as { text: string }[]).map((block) => block.text).join('\n')
    if (result.isError) throw new Error(`${name} failed: ${text}\nserver stderr:\n${stderr}`)
    return text
  }

  it('keeps shell state across calls, signals, runs in the background, and leaves no process behind', async () => {
    const { tools } = await client.listTools()
    expect(tools.map((tool) => tool.name).sort()).toEqual(ALL_TOOLS)

    expect(await call('terminal_open', { type: 'shell', name: 'main' })).toMatch(/^started terminal session pty-1 \(main\) \[type: shell\]/)

    // cd + export persist into the next call (the expected output appears in no echoed input).
    expect(await call('terminal_send', { sessionId: 'pty-1', text: 'mkdir -p sub && cd sub && export GREETING_E2E=hello-e2e' })).toMatch(/\[exit: 0\]/)
    const echoed = await call('terminal_send', { sessionId: 'pty-1', text: 'echo "$GREETING_E2E from $(basename "$PWD")"' })
    expect(echoed).toContain('hello-e2e from sub')
    expect(echoed).toMatch(/\[wait: stdin_read\]\n\[input: prompt\]\n\[exit: 0\]\n\[session: running\]$/)

    const page = await call('terminal_read', { sessionId: 'pty-1' })
    expect(page).toContain('hello-e2e from sub')
    expect(page).toMatch(/\[lines: \d+-\d+ of \d+\]\n\[input: prompt\]$/)

    // A sleep holds the foreground; the send returns on silence (idleMs: silence alone never ends the
    // wait of a command proven not to read), the signal interrupts it, and the
    // shell answers the next command. The empty send first collects the interrupted command's
    // prompt, so the next send cannot mistake that late prompt for its own.
    // What is in front is said: sleep, proven not to read the terminal.
    expect(await call('terminal_send', { sessionId: 'pty-1', text: 'sleep 30', idleMs: 1000 })).toMatch(
      /\[input: none; busy: sleep, pid \d+, running [^,\]]+, not reading the terminal\]/,
    )
    expect(await call('terminal_signal', { sessionId: 'pty-1', signal: 'SIGINT' })).toMatch(/^delivered SIGINT to foreground process group \d+$/)
    await call('terminal_send', { sessionId: 'pty-1', text: '', submit: false })
    expect(await call('terminal_send', { sessionId: 'pty-1', text: 'echo after-$((6*7))' })).toContain('after-42')

    // A background send, collected with job_output.
    expect(await call('terminal_send', { sessionId: 'pty-1', text: 'for i in 1 2 3; do echo line-$i; done', run_in_background: true })).toBe(
      'started background job pty-send-1',
    )
    const output = await call('job_output', { jobId: 'pty-send-1', wait: true })
    expect(output).toContain('line-1\nline-2\nline-3')
    expect(output).toMatch(/\[status: completed, wait: stdin_read, input: prompt, exit: 0, session: running\]$/)

    expect(await call('terminal_close', { sessionId: 'pty-1' })).toBe('closed terminal session pty-1')
    expect(await call('terminal_list', {})).toBe('(no terminal sessions)')

    // Leave work running at disconnect: a background child and a background send.
    await call('terminal_open', { type: 'shell', name: 'last' })
    await call('terminal_send', { sessionId: 'pty-2', text: 'sleep 300 &' })
    expect(await call('terminal_send', { sessionId: 'pty-2', text: 'sleep 200', run_in_background: true })).toBe('started background job pty-send-2')
    expect(await call('terminal_list', {})).toMatch(/^pty-2 \(last\) \[shell\] running pid=\d+ size=\d+x\d+ \[input: none; busy: [^,\]]+, pid \d+[^\]]*\]$/)

    const server = transport.pid!
    // The background send's `sleep 200` may still be a fork of bash: wait until both sleeps run.
    const tree = await eventually(() => {
      const found = descendants(server).map((process) => ({ ...process, command: processName(process.pid) }))
      return found.filter((process) => process.command === 'sleep').length >= 2 && found
    }, 'both sleeps to run under the server')
    expect(tree.some((process) => process.command === 'bash')).toBe(true)

    // Disconnect: stdin closes, the server ends the client's agent, and exits. Everything it started
    // must already be gone when the server process has exited.
    await client.close()
    const survivors = tree.filter(stillRunning)
    expect(survivors, `survivors: ${JSON.stringify(survivors)}\nserver stderr:\n${stderr}`).toEqual([])
  })
})
