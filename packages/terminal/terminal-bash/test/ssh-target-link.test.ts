import type { SubprocessRuntime } from 'dsh-subprocess'
import { commandLine, eventually, foregroundGroup, type SshHost, startSshHost } from 'dsh-testkit'
import type { TerminalSessionId } from 'dsh-terminal'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Stack } from './support/stack'
import { type SshTarget, sshStack, sshTarget, sshTargetRuns } from './support/ssh-target'

/*
 * The ssh target's link cut under a running send (`ip link set … down` on this side of the veth
 * pair: packets stop, the TCP connection and ssh stay up, nothing tells the client). ssh's own
 * keepalive is set past every wait here (the fixture's ServerAliveInterval), so what these tests
 * see is the session client's doing. `livenessMs` is the client's ping interval.
 */

/** The client's liveness interval: a silent link is given up after about twice this. */
const LIVENESS_MS = 1000

let host: SshHost
let target: SshTarget
let stack: Stack

beforeAll(async () => {
  if (!sshTargetRuns) return
  host = await startSshHost()
  target = sshTarget(host)
  stack = await sshStack(target, { livenessMs: LIVENESS_MS })
}, 60_000)

// A test that timed out while the link was down must not leave it down for the next one.
afterEach(() => host?.restore())

afterAll(async () => {
  await stack?.dispose()
  await host?.stop()
  target?.remove()
}, 60_000)

/** A fresh session with `sleep 100` in front, its send still running. */
async function sleeping(timeoutMs: number) {
  const { sessionId, pid } = await stack.open()
  const send = stack.send(sessionId, 'sleep 100', { timeoutMs })
  await eventually(() => commandLine(foregroundGroup(pid as number) ?? 0)?.[0]?.endsWith('sleep') === true, 'sleep to take the foreground')
  return { sessionId, send }
}

describe.skipIf(!sshTargetRuns)('an ssh target whose link is cut', () => {
  it('a send running when the link is cut ends (no hang): by its timeout, or as the session lost', async () => {
    const { send } = await sleeping(3_000)
    host.cut()
    const result = await send.done
    expect(['timeout', 'session_exit']).toContain(result.waitReason)
    await send.released
  }, 30_000)

  // The client's liveness check: no pong within two livenessMs gives the connection up (TARGET_UNREACHABLE).
  it('the send ends as session_exit once the client gives the silent link up, long before its own timeout', async () => {
    const { send } = await sleeping(8 * LIVENESS_MS)
    host.cut()
    expect(await send.done).toMatchObject({ waitReason: 'session_exit', sessionStatus: { kind: 'exited' } })
    await send.released
  }, 30_000)

  // Without the check a call would wait for its reply until ssh's own keepalive gave up (90 s here).
  // A signal is a call the cut link never answers; once the link is given up a write fails too.
  it('a call on a terminal of the cut target rejects with TARGET_UNREACHABLE', async () => {
    const runtime = stack.root.subprocess as SubprocessRuntime
    const shell = await runtime.spawnTerminal({ argv: ['bash', '--noprofile', '--norc'], cwd: '/tmp', rows: 24, cols: 80, graceMs: 1000 })
    await shell.write('echo linked\r')
    host.cut()
    await expect(shell.signalForeground('SIGWINCH')).rejects.toMatchObject({ code: 'TARGET_UNREACHABLE' })
    await expect(shell.write('echo cut\r')).rejects.toMatchObject({ code: 'TARGET_UNREACHABLE' })
    expect(await shell.done).toMatchObject({ exitCode: null })
  }, 15_000)

  it('once the link is back a new session opens on the target and runs', async () => {
    host.restore()
    let id: TerminalSessionId | undefined
    try {
      id = (await stack.open()).sessionId
      expect(await stack.run(id, 'echo back-$((6*7))')).toMatchObject({ viewport: expect.stringContaining('back-42\n'), waitReason: 'stdin_read' })
    } finally {
      if (id) await stack.terminals.close(stack.agent, id)
    }
  }, 30_000)
})
