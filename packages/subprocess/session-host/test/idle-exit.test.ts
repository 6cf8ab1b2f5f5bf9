import { eventually, isAlive } from 'dsh-testkit'
import { describe, expect, it } from 'vitest'
import { startHostProcess } from './support/host-process'
import { bashSpawn, socketClient } from './support/wire-client'

describe('idle exit', () => {
  it('stays while a client holds a terminal past the idle time, exits by itself once the last client left, and removes its socket', async () => {
    const host = await startHostProcess(['--idle-exit-ms', '200'])
    const { existsSync } = await import('node:fs')
    try {
      const client = await socketClient(host.socketPath)
      const { terminal } = (await client.ok('spawn', bashSpawn())) as { terminal: number }
      // Work that outlasts the idle time twice over: the session host must still be serving at its end.
      await client.ok('write', { terminal, data: Buffer.from('sleep 0.5; echo after-$((1+1))\r').toString('base64') })
      await eventually(() => client.terminals.get(terminal)?.text().includes('after-2'), 'the command after the sleep')
      expect(isAlive(host.pid)).toBe(true)
      client.close()
      expect(await host.exited).toEqual({ code: 0, signal: null })
      expect(existsSync(host.socketPath)).toBe(false)
    } finally {
      await host.stop()
    }
  })
})
