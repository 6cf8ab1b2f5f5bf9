import { readdirSync } from 'node:fs'
import { sessionHostCommand } from 'dsh-session-host'
import { commandLine, eventually, isAlive } from 'dsh-testkit'
import { afterAll, describe, expect, it } from 'vitest'
import { bashSpec, collect, freshSocketPath, mountRemote, removeSocketDir } from './support/remote'

const socketPath = freshSocketPath()
afterAll(() => removeSocketDir(socketPath))

/** Pids of the `--stdio` relays to `socketPath` now running. */
function relays(): number[] {
  return readdirSync('/proc').flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return []
    const argv = commandLine(Number(entry)) ?? []
    return argv.includes('--stdio') && argv.includes(socketPath) ? [Number(entry)] : []
  })
}

describe('connect: a command whose stdin/stdout reach dsh-session-host --stdio', () => {
  it('runs terminals through it; unloading ends the terminals and the relay, and the session host it reached idles out', async () => {
    // `--stdio` relays to the socket session host (started on first use): a socket of this test's own.
    const remote = await mountRemote({ connect: [...sessionHostCommand(), '--stdio', '--socket', socketPath, '--idle-exit-ms', '300'] })
    const shell = await remote.runtime.spawnTerminal(bashSpec())
    const hostPid = (await remote.runtime.sessionHostPid())!
    expect(relays()).toHaveLength(1)
    expect(relays()).not.toContain(hostPid)
    const text = collect(shell)
    await shell.write('echo through-$((3*3))\r')
    await eventually(() => text().includes('through-9'), 'the echo through the command')
    await remote.dispose()
    expect(isAlive(shell.pid)).toBe(false)
    await eventually(() => relays().length === 0, 'the relay to exit')
    await eventually(() => !isAlive(hostPid), 'the session host to exit once idle')
  })
})
