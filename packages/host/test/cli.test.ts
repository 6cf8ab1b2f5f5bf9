import { spawnSync } from 'node:child_process'
import { realpathSync } from 'node:fs'
import { copyFile, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { banner, launchCommand } from '../src/cli/banner'
import { parseCliArgs } from '../src/cli/args'
import { CLI_ARGS, DEFAULT_CONFIG, REPO_ROOT, SNAPSHOT_CONFIG, tempDir, TSX } from './helpers'
import { HANDSHAKE, jsonRpcLines, runCli, start } from './process'

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()))
})

const hasPnpm = spawnSync('pnpm', ['--version'], { stdio: 'ignore' }).status === 0

/** Send the handshake, wait for both responses, then close stdin: the server must exit 0 on EOF. */
async function handshake(command: string, args: string[]) {
  const running = start(command, args)
  running.child.stdin.write(HANDSHAKE)
  await running.waitForStdout((stdout) => jsonRpcLines(stdout).some((message) => message.id === 1))
  running.child.stdin.end()
  return running.finished
}

describe('command line', () => {
  it('parses the two commands, their options, and a literal -- from pnpm', () => {
    expect(parseCliArgs(['mcp'])).toEqual({ kind: 'run', command: 'mcp' })
    expect(parseCliArgs(['headless', '--config', 'x.yml', '--cwd', '/w'])).toEqual({ kind: 'run', command: 'headless', config: 'x.yml', cwd: '/w' })
    expect(parseCliArgs(['mcp', '--cwd', '/w', '--', '--config', 'y.yml'])).toEqual({ kind: 'run', command: 'mcp', config: 'y.yml', cwd: '/w' })
    expect(parseCliArgs(['mcp', '--cwd', ''])).toEqual({ kind: 'run', command: 'mcp' })
    expect(parseCliArgs(['--help'])).toEqual({ kind: 'help' })
    expect(parseCliArgs(['serve'])).toEqual({ kind: 'usage-error', message: 'unknown command "serve"' })
    expect(parseCliArgs([])).toEqual({ kind: 'run', command: 'mcp' })
    expect(parseCliArgs(['--config', 'x.yml'])).toEqual({ kind: 'run', command: 'mcp', config: 'x.yml' })
    expect(parseCliArgs(['mcp', '--nope'])).toEqual({ kind: 'usage-error', message: 'unknown option --nope' })
    expect(parseCliArgs(['--bogus=1'])).toEqual({ kind: 'usage-error', message: 'unknown option --bogus' })
    expect(parseCliArgs(['mcp', '--config'])).toEqual({ kind: 'usage-error', message: '--config needs a value' })
    expect(parseCliArgs(['--help=yes'])).toEqual({ kind: 'usage-error', message: '--help takes no value' })
    expect(parseCliArgs(['mcp', 'extra'])).toEqual({ kind: 'usage-error', message: 'unexpected argument "extra"' })
  })

  it('answers a usage error on stderr with exit 2, a missing config with exit 1, and never writes stdout', async () => {
    const usage = await runCli(['serve'])
    expect(usage).toMatchObject({ code: 2, stdout: '' })
    expect(usage.stderr).toBe('dsh-terminal: unknown command "serve" (dsh-terminal-mcp --help shows the usage)\n')
    const bogus = await runCli(['--bogus'])
    expect(bogus).toMatchObject({ code: 2, stdout: '', stderr: 'dsh-terminal: unknown option --bogus (dsh-terminal-mcp --help shows the usage)\n' })
    const missing = await runCli(['mcp', '--config', 'nope/cordis.yml'])
    expect(missing).toMatchObject({ code: 1, stdout: '' })
    expect(missing.stderr).toContain(`dsh-terminal mcp: ${join(REPO_ROOT, 'nope/cordis.yml')} did not start:\n  no such config file`)
  })

  it('fails loudly at startup, before any protocol output, when an entry does not start', async () => {
    const { dir, remove } = await tempDir('dsh-host-cli-')
    cleanups.push(remove)
    await writeFile(
      join(dir, 'cordis.yml'),
      '- id: agents\n  name: dsh-agent\n- id: tools\n  name: dsh-tools\n- id: bad\n  name: dsh-jobs\n  config: { maxActiveJobsPerOwner: -1 }\n',
    )
    const result = await runCli(['headless', '--config', join(dir, 'cordis.yml')], '{"id": 1, "tool": "job_list"}\n')
    expect(result).toMatchObject({ code: 1, stdout: '' })
    expect(result.stderr).toMatch(/did not start:\n {2}bad \(dsh-jobs\): invalid config/)
  })
})

describe('dsh-terminal headless', () => {
  it('answers every line, survives malformed ones, and exits 0 at EOF, from a directory outside the repository', async () => {
    const { dir, remove } = await tempDir('dsh-host-cwd-')
    cleanups.push(remove)
    // A self-contained copy of the default composition in a folder with no node_modules: names
    // still resolve, and the snapshot overlay next to it includes it.
    await copyFile(DEFAULT_CONFIG, join(dir, 'cordis.yml'))
    await writeFile(join(dir, 'snapshot.yml'), (await readFile(SNAPSHOT_CONFIG, 'utf8')).replace('path: ../cordis.yml', 'path: ./cordis.yml'))
    const input = [
      '{"id": 1, "tool": "terminal_open", "arguments": {"type": "snapshot"}}',
      'this is not json',
      '{"id": 2, "tool": "terminal_send", "arguments": {"sessionId": "pty-1", "text": "hello"}}',
      '{"id": 3, "tool": "terminal_signal", "arguments": {"sessionId": "pty-1", "signal": "SIGSTOP"}}',
    ].join('\n')
    const result = await runCli(['headless', '--config', 'snapshot.yml'], `${input}\n`, dir)
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    const lines = result.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(lines.map((line) => [line.id, line.isError])).toEqual([
      [1, false],
      [null, true],
      [2, false],
      [3, true],
    ])
    expect(lines[2]!.text).toBe('hello\nok: hello\n[wait: stdin_read]\n[exit: 0]\n[session: running]')
    expect(lines[3]!.meta).toEqual({ errorCode: 'INVALID_ARGUMENTS' })
  })
  it('runs in --cwd: new sessions of the default composition start in that workspace', async () => {
    const { dir, remove } = await tempDir('dsh-host-workspace-')
    cleanups.push(remove)
    const input = [
      '{"id": 1, "tool": "terminal_open", "arguments": {"type": "shell"}}',
      '{"id": 2, "tool": "terminal_send", "arguments": {"sessionId": "pty-1", "text": "echo \\"cwd=$PWD\\""}}',
    ].join('\n')
    const result = await runCli(['headless', '--config', 'cordis.yml', '--cwd', dir], `${input}\n`)
    expect(result.code).toBe(0)
    const [opened, sent] = result.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { isError: boolean; text: string })
    expect(opened!.isError).toBe(false)
    expect(sent!.text).toContain(`cwd=${realpathSync(dir)}\n`)
  })
})

describe('dsh-terminal mcp', () => {
  it('speaks only JSON-RPC on stdout, prints no banner without a TTY, and exits 0 when stdin closes', async () => {
    const result = await handshake(TSX, [...CLI_ARGS, 'mcp', '--config', SNAPSHOT_CONFIG])
    expect(result.code).toBe(0)
    const messages = jsonRpcLines(result.stdout)
    expect(messages.map((message) => message.id)).toEqual([0, 1])
    expect(messages[0]!.result).toMatchObject({ serverInfo: { name: 'dsh-terminal' }, capabilities: { tools: {} } })
    expect((messages[1]!.result!.tools as unknown[]).length).toBe(9)
    expect(result.stderr).not.toContain('claude mcp add')
  })

  it('closes everything and exits 0 on SIGTERM', async () => {
    const running = start(TSX, [...CLI_ARGS, 'mcp', '--config', SNAPSHOT_CONFIG])
    running.child.stdin.write(HANDSHAKE)
    await running.waitForStdout((stdout) => jsonRpcLines(stdout).some((message) => message.id === 1))
    running.child.kill('SIGTERM')
    expect((await running.finished).code).toBe(0)
  })

  it.skipIf(!hasPnpm)('`pnpm start` keeps stdout clean: pnpm itself prints nothing there', async () => {
    const result = await handshake('pnpm', ['start', '--', '--config', 'examples/snapshot.yml'])
    expect(result.code).toBe(0)
    expect(jsonRpcLines(result.stdout).map((message) => message.id)).toEqual([0, 1])
  })
})

describe('banner', () => {
  it('tells a person what this is and the exact commands that connect a client', () => {
    const text = banner({ configPath: '/repo/cordis.yml', workspace: '/home/me/project', repository: '/repo' })
    expect(text).toContain('dsh-terminal: persistent bash sessions for AI agents, served over MCP on stdin/stdout.')
    expect(text).toContain('claude mcp add dsh-terminal -- pnpm --silent --dir /repo start')
    expect(text).toContain('codex mcp add dsh-terminal -- pnpm --silent --dir /repo start')
    const json = text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1)
    expect(JSON.parse(json)).toEqual({ mcpServers: { 'dsh-terminal': { command: 'pnpm', args: ['--silent', '--dir', '/repo', 'start'] } } })
    expect(text).toContain('workspace:   /home/me/project')
  })

  it('quotes a repository path with spaces, and uses npx outside a checkout', () => {
    expect(banner({ configPath: 'c', workspace: 'w', repository: '/my repo' })).toContain("-- pnpm --silent --dir '/my repo' start")
    expect(launchCommand(REPO_ROOT)).toEqual({ command: 'pnpm', args: ['--silent', '--dir', REPO_ROOT, 'start'] })
    expect(launchCommand(undefined)).toEqual({ command: 'npx', args: ['-y', 'dsh-terminal-mcp'] })
    expect(banner({ configPath: 'c', workspace: 'w', repository: undefined })).toContain('claude mcp add dsh-terminal -- npx -y dsh-terminal-mcp')
  })
})
