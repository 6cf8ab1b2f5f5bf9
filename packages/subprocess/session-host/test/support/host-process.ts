import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { hostRuntimeDir } from 'dsh-sandbox'
import { eventually } from 'dsh-testkit'
import { sessionHostCommand } from '../../src/index'

/** Starting tsx on a loaded 2-core machine takes seconds: how long a session host gets to listen. */
export const START_TIMEOUT_MS = 20_000

/** A session host bin run by a test. */
export interface HostProcess {
  readonly child: ChildProcess
  readonly pid: number
  readonly socketPath: string
  /** Everything it wrote to stderr so far. */
  readonly stderr: () => string
  /** Everything it wrote to stdout so far (socket mode: must stay empty). */
  readonly stdout: () => string
  /** Resolves with its exit status once it exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** SIGTERM it (if still running), wait for its exit and remove its directory. */
  readonly stop: () => Promise<void>
}

/** A fresh private socket path under this uid's runtime directory (removed by `stop`). */
export function freshSocketPath(): string {
  return join(hostRuntimeDir(process.getuid?.() ?? -1), `test-${randomBytes(6).toString('hex')}`, 'session-host.sock')
}

/** Run `dsh-session-host --socket <fresh path>` and wait until it listens. */
export async function startHostProcess(args: string[] = [], socketPath = freshSocketPath(), env: Record<string, string> = {}): Promise<HostProcess> {
  const [file = '', ...prefix] = sessionHostCommand()
  const child = spawn(file, [...prefix, '--socket', socketPath, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } })
  let stderr = ''
  let stdout = ''
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  )
  await eventually(() => stderr.includes('listening on') || child.exitCode !== null, 'the session host to listen', START_TIMEOUT_MS)
  if (!stderr.includes('listening on')) throw new Error(`the session host did not start: ${stderr}`)
  return {
    child,
    pid: child.pid!,
    socketPath,
    stderr: () => stderr,
    stdout: () => stdout,
    exited,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      await exited
      rmSync(join(socketPath, '..'), { recursive: true, force: true })
    },
  }
}
