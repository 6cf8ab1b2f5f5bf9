import { randomBytes } from 'node:crypto'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { Context, type Fiber } from '@deepseek-ai/cordis'
import { hostRuntimeDir } from 'dsh-sandbox'
import type { TerminalSpawnSpec } from 'dsh-subprocess'
import { eventually, isAlive } from 'dsh-testkit'
import * as remotePlugin from '../../src/index'
import type { RemoteSubprocessRuntime } from '../../src/index'

/** A fresh socket path in this uid's runtime directory, so tests never share the real per-user session host. */
export function freshSocketPath(): string {
  return join(hostRuntimeDir(process.getuid?.() ?? -1), `test-remote-${randomBytes(6).toString('hex')}`, 'session-host.sock')
}

/** The remote provider mounted in a context of its own. */
export interface MountedRemote {
  readonly root: Context
  readonly runtime: RemoteSubprocessRuntime
  readonly fiber: Fiber
  /** Unload the provider (terminating its terminals and hanging up). */
  readonly dispose: () => Promise<void>
}

/** Mount dsh-subprocess-remote with `config` (a fresh socket path unless given). */
export async function mountRemote(config: Parameters<typeof remotePlugin.apply>[1] = {}): Promise<MountedRemote> {
  const root = new Context()
  const fiber = await root.plugin(remotePlugin, { socketPath: freshSocketPath(), ...config })
  const runtime = root.subprocess as RemoteSubprocessRuntime
  return { root, runtime, fiber, dispose: () => fiber.dispose() }
}

/** Remove the directory of a test socket path. */
export function removeSocketDir(socketPath: string): void {
  rmSync(join(socketPath, '..'), { recursive: true, force: true })
}

/** A bash spawn without rc files and a plain prompt. */
export function bashSpec(extra: Partial<TerminalSpawnSpec> = {}): TerminalSpawnSpec {
  return { argv: ['bash', '--noprofile', '--norc', '-i'], cwd: '/', env: { PS1: '$ ', TERM: 'dumb' }, rows: 24, cols: 80, graceMs: 1000, ...extra }
}

/** Everything a handle printed, collected from its first listener on. */
export function collect(handle: { onOutput(listener: (chunk: Buffer) => void): () => void }): () => string {
  let text = ''
  handle.onOutput((chunk) => (text += chunk.toString('utf8')))
  return () => text
}

/**
 * Processes a test file leaves to the end (session hosts started on first use, relays) and the
 * socket directories it made: `stop()` signals the processes, waits until they are gone, then
 * removes the directories. Call it from `afterAll`.
 */
export function cleanupAtEnd(signal: NodeJS.Signals = 'SIGTERM') {
  const pids = new Set<number>()
  const sockets = new Set<string>()
  return {
    /** Stop `pid` at the end. */
    process: (pid: number | undefined) => {
      if (pid !== undefined) pids.add(pid)
    },
    /** A fresh socket path whose directory goes at the end. */
    socket: () => {
      const path = freshSocketPath()
      sockets.add(path)
      return path
    },
    stop: async () => {
      for (const pid of pids) if (isAlive(pid)) process.kill(pid, signal)
      await eventually(() => [...pids].every((pid) => !isAlive(pid)), 'the session hosts and relays of this file to end')
      for (const path of sockets) removeSocketDir(path)
    },
  }
}
