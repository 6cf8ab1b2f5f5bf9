import { sessionHostCommand } from 'dsh-session-host'
import type { SubprocessTerminalHandle } from 'dsh-subprocess'
import { eventually, processesWithArgs } from 'dsh-testkit'
import { afterAll, describe, expect, it } from 'vitest'
import { bashSpec, cleanupAtEnd, collect, mountRemote } from './support/remote'

const cleanup = cleanupAtEnd('SIGKILL')
const socketPath = cleanup.socket()
afterAll(() => cleanup.stop())

/** Pids of live relays (`--stdio`) of this file's socket path. */
const relayPids = (): number[] => processesWithArgs('--stdio', socketPath)

const LINES = 300

/** The numbers of the `L<n>` lines in `text`, in the order they arrived. */
function lineNumbers(text: string): number[] {
  return [...text.matchAll(/^L(\d+)\r?$/gm)].map((match) => Number(match[1]))
}

/** Start a paced stream of {@link LINES} lines on `shell` and answer once `from` of them arrived. */
async function streamUntil(shell: SubprocessTerminalHandle, text: () => string, from: number): Promise<void> {
  // Paced by the producer (a short sleep per line) so the stream is still running when the link goes.
  await shell.write(`for i in $(seq 1 ${LINES}); do echo L$i; sleep 0.01; done; echo END-$((6*7))\r`)
  await eventually(() => lineNumbers(text()).length >= from, `${from} lines of the stream`)
}

describe('a link lost while output is still arriving', () => {
  for (const [how, signal] of [
    ['killed (the link ends)', 'SIGKILL'],
    ['stopped (the link hangs until the liveness check)', 'SIGSTOP'],
  ] as const) {
    it(`relay ${how} mid-stream: after the re-adoption every line arrived exactly once, in order`, async () => {
      const connect = [...sessionHostCommand(), '--stdio', '--socket', socketPath, '--idle-exit-ms', '0']
      const earlier = new Set(relayPids())
      const remote = await mountRemote({ connect, livenessMs: 300 })
      try {
        const shell = await remote.runtime.spawnTerminal(bashSpec({ durable: { key: `stream-${signal}`, ttlMs: 60_000, retainBytes: 1024 * 1024 } }))
        cleanup.process((await remote.runtime.sessionHostPid())!)
        const [relay] = relayPids().filter((pid) => !earlier.has(pid))
        expect(relay).toBeDefined()
        cleanup.process(relay!)
        const text = collect(shell)
        const lost = new Promise<Error>((resolve) => shell.onLinkLost?.(resolve))
        await streamUntil(shell, text, 20)
        process.kill(relay!, signal)
        expect(await lost).toMatchObject({ code: 'TARGET_UNREACHABLE' })
        // Cut before the end: the rest is printed while the link is down.
        expect(lineNumbers(text()).length).toBeLessThan(LINES)
        if (signal === 'SIGSTOP') process.kill(relay!, 'SIGCONT')
        // A call brings it back at once; the rest of the stream follows the replay.
        await shell.write('')
        await eventually(() => text().includes('END-42'), 'the end of the stream after the re-adoption')
        expect(lineNumbers(text())).toEqual(Array.from({ length: LINES }, (_, i) => i + 1))
        expect(shell.exit).toBeUndefined()
        await shell.terminate()
      } finally {
        await remote.dispose()
      }
    }, 60_000)
  }
})
