import { readdirSync, readFileSync } from 'node:fs'
import { sessionHostCommand } from 'dsh-session-host'
import { isSubprocessError } from 'dsh-subprocess'
import { afterAll, describe, expect, it } from 'vitest'
import { bashSpec, cleanupAtEnd, mountRemote } from './support/remote'

// A link that stops carrying bytes without ending: the connect command is a --stdio relay that the
// test stops with SIGSTOP, the way a cut network leaves ssh hanging.
const cleanup = cleanupAtEnd('SIGKILL')
const socketPath = cleanup.socket()
afterAll(() => cleanup.stop())

/** Pids of live processes whose argv holds both `--stdio` and this test's socket path. */
function relayPids(): number[] {
  const found: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, 'latin1').split('\0')
      if (argv.includes('--stdio') && argv.includes(socketPath)) found.push(Number(name))
    } catch {
      // Gone.
    }
  }
  return found
}

describe('liveness', () => {
  it('a relay that stops forwarding: pending calls reject TARGET_UNREACHABLE and done resolves', async () => {
    const connect = [...sessionHostCommand(), '--stdio', '--socket', socketPath, '--idle-exit-ms', '0']
    const remote = await mountRemote({ connect, livenessMs: 300 })
    try {
      const shell = await remote.runtime.spawnTerminal(bashSpec())
      cleanup.process((await remote.runtime.sessionHostPid())!)
      const [relay] = relayPids()
      expect(relay).toBeDefined()
      cleanup.process(relay!)
      shell.onOutput(() => {})
      process.kill(relay!, 'SIGSTOP')
      // A write is an input frame (no reply to wait for); a signal is a call the relay now never answers.
      const pending = shell.signalForeground('SIGWINCH').catch((error: unknown) => error)
      const failed = await pending
      expect(isSubprocessError(failed, 'TARGET_UNREACHABLE')).toBe(true)
      expect(await shell.done).toEqual({ exitCode: null, signal: 'SIGKILL' })
      expect(isSubprocessError(await shell.write('echo never\r').catch((error: unknown) => error), 'TARGET_UNREACHABLE')).toBe(true)
    } finally {
      await remote.dispose()
    }
  }, 60_000)
})
