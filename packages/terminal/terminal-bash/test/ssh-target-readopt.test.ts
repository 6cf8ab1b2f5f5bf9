import { writeFileSync } from 'node:fs'
import * as remotePlugin from 'dsh-subprocess-remote'
import { eventually, type SshHost, startSshHost } from 'dsh-testkit'
import { asTerminalSessionId, type TerminalSessionId } from 'dsh-terminal'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type SshTarget, sshTarget, sshTargetRuns } from './support/ssh-target'
import { PATIENT, type Stack, startStack } from './support/stack'

/*
 * Re-adoption by the same host: a durable session on an ssh target (the registry keeps sessions
 * detached, so the provider spawns them durable) whose link is cut during a send. The client gives
 * the silent link up and the send ends with TARGET_UNREACHABLE, the session host on the target keeps the session, and
 * once the link is back the same provider adopts it again on a new connection: the next call sees
 * every line printed while cut, once and in order.
 */

const LIVENESS_MS = 1000
const LINES = 30

let host: SshHost
let target: SshTarget
let stack: Stack

beforeAll(async () => {
  if (!sshTargetRuns) return
  host = await startSshHost()
  target = sshTarget(host)
  stack = await startStack(PATIENT, {
    provider: { plugin: remotePlugin, config: { connect: target.connect, startTimeoutMs: 20_000, livenessMs: LIVENESS_MS } },
    terminals: { detachedTtlMs: 600_000 },
  })
}, 60_000)

afterEach(() => host?.restore())

afterAll(async () => {
  await stack?.dispose()
  await host?.stop()
  target?.remove()
}, 60_000)

/** Every `n` of lines `line-<n>` in `text`, in order. */
function numbered(text: string): number[] {
  return [...text.matchAll(/^line-(\d+)$/gm)].map((match) => Number(match[1]))
}

/** Longer than this test may run (its vitest timeout): a send with it that ends did not end by it. */
const NEVER_MS = 600_000

describe.skipIf(!sshTargetRuns)('a durable session on an ssh target whose link is cut and restored', () => {
  it('the send at the cut ends with TARGET_UNREACHABLE, not by its timeout; the same host adopts it again: every line printed while cut comes once, in order; cwd and env kept', async () => {
    let id: TerminalSessionId | undefined
    try {
      const opened = await stack.open()
      id = opened.sessionId
      await stack.run(id, 'cd /tmp && export DSH_READOPT=kept')
      // Each line waits for a file the test creates once the link is cut, so some lines are printed while cut.
      const gate = `/tmp/dsh-readopt-${process.pid}-${Date.now()}`
      const send = stack.send(
        id,
        `for i in $(seq 1 ${LINES}); do echo line-$i; [ $i = 5 ] && while [ ! -e ${gate} ]; do sleep 0.05; done; done; rm -f ${gate}`,
        { timeoutMs: NEVER_MS },
      )
      const session = asTerminalSessionId(id)
      // Lines 1–5 reach this side before the cut; the rest are printed once it is cut.
      await eventually(() => numbered(stack.terminals.read(stack.agent, session, { offset: 0, count: 200 }).text).includes(5), 'line-5 to arrive')
      host.cut()
      writeFileSync(gate, '')
      // Ended by the client's liveness check (about 2 × LIVENESS_MS): its own timeout is longer than this test may run.
      const cutError = await send.done.then(
        (result) => result,
        (error: unknown) => error,
      )
      await send.released
      expect(cutError).toMatchObject({
        code: 'TARGET_UNREACHABLE',
        message: expect.stringContaining('kept on the target and will be adopted again on the next call'),
      })
      // The session was kept: listed, running (no read here: one showing the newest lines would count as their result).
      expect(stack.terminals.list(stack.agent).find((listed) => listed.sessionId === session)?.status).toEqual({ kind: 'running' })
      host.restore()
      const next = await stack.run(id, 'echo "after $PWD $DSH_READOPT"')
      expect(next).toMatchObject({ waitReason: 'stdin_read', viewport: expect.stringContaining('after /tmp kept\n') })
      // The next call shows every line once: those the cut send had and those printed while cut, in order.
      expect(numbered(`${next.earlierOutput ?? ''}${next.viewport}`)).toEqual(Array.from({ length: LINES }, (_, index) => index + 1))
      const all = stack.terminals.read(stack.agent, session, { offset: 0, count: 500 }).text
      expect(numbered(all)).toEqual(Array.from({ length: LINES }, (_, index) => index + 1))
    } finally {
      if (id) await stack.terminals.close(stack.agent, id)
    }
  }, 90_000)
})
