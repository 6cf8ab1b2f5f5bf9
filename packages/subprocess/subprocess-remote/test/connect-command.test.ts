import { sessionHostCommand } from 'dsh-session-host'
import { eventually, isAlive } from 'dsh-testkit'
import { describe, expect, it } from 'vitest'
import { bashSpec, collect, mountRemote } from './support/remote'

describe('connect: a command whose stdin/stdout reach dsh-session-host --stdio', () => {
  it('runs terminals through it; unloading ends the terminals and the command', async () => {
    const remote = await mountRemote({ connect: [...sessionHostCommand(), '--stdio'] })
    const shell = await remote.runtime.spawnTerminal(bashSpec())
    const hostPid = (await remote.runtime.sessionHostPid())!
    const text = collect(shell)
    await shell.write('echo through-$((3*3))\r')
    await eventually(() => text().includes('through-9'), 'the echo through the command')
    await remote.dispose()
    expect(isAlive(shell.pid)).toBe(false)
    await eventually(() => !isAlive(hostPid), 'the stdio session host to exit')
  })
})
