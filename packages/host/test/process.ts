import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { CLI_ARGS, REPO_ROOT, TSX } from './helpers'

/** A finished child process and everything it printed. */
export interface Finished {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/** A running child with its output collected so far. */
export interface Running {
  child: ChildProcessWithoutNullStreams
  stdout: () => string
  stderr: () => string
  /** Resolves with the first stdout that satisfies `test` (checked on every chunk). */
  waitForStdout(test: (stdout: string) => boolean): Promise<string>
  /** Resolves when the child exited, with its output. */
  finished: Promise<Finished>
}

/** Start `command args` in `cwd` with pipes on all three streams. */
export function start(command: string, args: readonly string[], cwd: string = REPO_ROOT, env: Record<string, string> = {}): Running {
  const child = spawn(command, args, { cwd, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, FORCE_COLOR: '0', ...env } })
  let stdout = ''
  let stderr = ''
  const watchers: { test: (text: string) => boolean; resolve: (text: string) => void }[] = []
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk
    for (const watcher of [...watchers]) {
      if (watcher.test(stdout)) {
        watchers.splice(watchers.indexOf(watcher), 1)
        watcher.resolve(stdout)
      }
    }
  })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const finished = new Promise<Finished>((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }))
  })
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    waitForStdout: (test) =>
      test(stdout)
        ? Promise.resolve(stdout)
        : new Promise((resolve, reject) => {
            watchers.push({ test, resolve })
            void finished.then((done) => reject(new Error(`exited (${done.code ?? done.signal}) before the expected output:\n${done.stdout}\n${done.stderr}`)))
          }),
    finished,
  }
}

/**
 * Run the CLI from sources (as `pnpm start` does, through tsx), feed `input`, and wait for its exit.
 * `wrapper` runs it through another command first (e.g. `setpriv …` to drop to another user).
 */
export async function runCli(args: readonly string[], input = '', cwd: string = REPO_ROOT, wrapper: readonly string[] = []): Promise<Finished> {
  const [command, ...prefix] = [...wrapper, TSX]
  const running = start(command as string, [...prefix, ...CLI_ARGS, ...args], cwd)
  running.child.stdin.end(input)
  return running.finished
}

/** The JSON-RPC lines of an MCP initialize handshake followed by tools/list. */
export const HANDSHAKE = [
  { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'handshake', version: '1' } } },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 1, method: 'tools/list' },
]
  .map((message) => `${JSON.stringify(message)}\n`)
  .join('')

/** Parse stdout as JSON-RPC lines; throws on the first line that is anything else. */
export function jsonRpcLines(stdout: string): { id?: number; result?: Record<string, unknown> }[] {
  return stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const message = JSON.parse(line) as { jsonrpc?: string }
      if (message.jsonrpc !== '2.0') throw new Error(`not a JSON-RPC message: ${line}`)
      return message as { id?: number; result?: Record<string, unknown> }
    })
}
