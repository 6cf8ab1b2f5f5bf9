import { isSubprocessError, MAX_TERMINAL_FACTS_BYTES, type SubprocessTerminalHandle } from 'dsh-subprocess'
import { eventually, isAlive } from 'dsh-testkit'
import { afterAll, describe, expect, it } from 'vitest'
import { bashSpec, cleanupAtEnd, collect, mountRemote } from './support/remote'

// Durable terminals through the provider: one provider spawns and goes away, another lists and
// adopts, over the same per-user socket session host (a real one, started on first use).
const cleanup = cleanupAtEnd()
const socketPath = cleanup.socket()
afterAll(() => cleanup.stop())

const durable = (key: string) => bashSpec({ durable: { key, ttlMs: 60_000, retainBytes: 256 * 1024 } })

describe('durable terminals through dsh-subprocess-remote', () => {
  it('disposal hangs up on durable terminals (terminating the others); another provider lists and adopts them: facts, replay from replayFrom, then live', async () => {
    const first = await mountRemote({ socketPath, idleExitMs: 0 })
    let shellPid: number
    let plainPid: number
    let seenBefore: string
    try {
      const shell = await first.runtime.spawnTerminal(durable('remote-1'))
      const plain = await first.runtime.spawnTerminal(bashSpec())
      cleanup.process((await first.runtime.sessionHostPid())!)
      shellPid = shell.pid
      plainPid = plain.pid
      expect(typeof shell.setFacts).toBe('function')
      expect(plain.setFacts).toBeUndefined()
      const text = collect(shell)
      await shell.write('echo before-$((1+1))\r')
      await eventually(() => text().includes('before-2'), 'the echo')
      expect(() => shell.setFacts!('x'.repeat(MAX_TERMINAL_FACTS_BYTES + 1))).toThrow(expect.objectContaining({ code: 'INVALID_SPEC' }))
      shell.setFacts!('{"nonce":"abc"}')
      // Ordered with writes: printed after the facts were stored, while nobody holds the terminal.
      await shell.write('sleep 0.5; echo while-$((2+2))-away\r')
      seenBefore = text()
    } finally {
      await first.dispose()
    }
    await eventually(() => !isAlive(plainPid), 'the non-durable terminal to end with its provider')
    expect(isAlive(shellPid)).toBe(true)

    const second = await mountRemote({ socketPath, idleExitMs: 0 })
    try {
      const listed = await eventually(async () => {
        const found = (await second.runtime.listDetached()).find((terminal) => terminal.key === 'remote-1')
        return found && found.outputBytes > Buffer.byteLength(seenBefore) + 5 && found
      }, 'the detached terminal with its output while away')
      expect(listed).toMatchObject({ key: 'remote-1', pid: shellPid, facts: '{"nonce":"abc"}' })
      const adopted = await second.runtime.adoptTerminal('remote-1')
      expect(adopted).toMatchObject({ facts: '{"nonce":"abc"}', replayFrom: 0 })
      const handle: SubprocessTerminalHandle = adopted.handle
      expect(handle.pid).toBe(shellPid)
      // The first listener gets the replay: exactly the stream, the first provider's view its prefix.
      const text = collect(handle)
      await eventually(() => text().includes('while-4-away'), 'the replay')
      expect(text().startsWith(seenBefore)).toBe(true)
      await handle.write('echo live-$((3+3))\r')
      await eventually(() => text().includes('live-6'), 'live output')
      const again = await second.runtime.adoptTerminal('remote-1').catch((error: unknown) => error)
      expect(isSubprocessError(again, 'TERMINAL_ADOPTED')).toBe(true)
      const missing = await second.runtime.adoptTerminal('never-spawned').catch((error: unknown) => error)
      expect(isSubprocessError(missing, 'TERMINAL_NOT_FOUND')).toBe(true)
      await handle.terminate()
      expect(isAlive(shellPid)).toBe(false)
      expect(await handle.done).toBeDefined()
    } finally {
      await second.dispose()
    }
  })

  it('once disposal resolved, another provider adopts at once: the session host has detached the terminal by then', async () => {
    const adopter = await mountRemote({ socketPath, idleExitMs: 0 })
    try {
      await adopter.runtime.listDetached()
      for (let round = 0; round < 5; round++) {
        const leaving = await mountRemote({ socketPath, idleExitMs: 0 })
        const shell = await leaving.runtime.spawnTerminal(durable(`at-once-${round}`))
        cleanup.process((await leaving.runtime.sessionHostPid())!)
        await leaving.dispose()
        // No retry: an adoption that raced the hang-up would get TERMINAL_ADOPTED here.
        const adopted = await adopter.runtime.adoptTerminal(`at-once-${round}`)
        expect(adopted.handle.pid).toBe(shell.pid)
        await adopted.handle.terminate()
      }
    } finally {
      await adopter.dispose()
    }
  })
})
