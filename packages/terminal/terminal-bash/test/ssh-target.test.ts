import { readdirSync, readlinkSync } from 'node:fs'
import type * as remotePlugin from 'dsh-subprocess-remote'
import {
  commandLine,
  descendants,
  eventually,
  foregroundGroup,
  identify,
  isAlive,
  type ProcessIdentity,
  type SshHost,
  startSshHost,
  statFields,
  stillRunning,
} from 'dsh-testkit'
import type { TerminalSessionId } from 'dsh-terminal'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Stack } from './support/stack'
import { type SshTarget, sshStack, sshTarget, sshTargetRuns } from './support/ssh-target'

/*
 * The shell stack over an ssh target: dsh-subprocess-remote runs `ssh … dsh-session-host --stdio`
 * against a second host (a network namespace of the test's own with its own sshd). The session host
 * and the shells are sshd's descendants there, and the readiness proofs are taken there.
 */

let host: SshHost
let target: SshTarget
let stack: Stack
let id: TerminalSessionId
let pid: number
let sessionHostPid: number

beforeAll(async () => {
  if (!sshTargetRuns) return
  host = await startSshHost()
  target = sshTarget(host)
  stack = await sshStack(target)
  const opened = await stack.open()
  id = opened.sessionId
  pid = opened.pid as number
  sessionHostPid = (await (stack.root.subprocess as remotePlugin.RemoteSubprocessRuntime).sessionHostPid())!
}, 60_000)

afterAll(async () => {
  await stack?.dispose()
  await host?.stop()
  target?.remove()
})

/** Where a /proc descriptor link points, or '' once it is gone. */
function readlinkOr(path: string): string {
  try {
    return readlinkSync(path)
  } catch {
    return ''
  }
}

/** Live processes whose session id is `sid`, from every entry of /proc. */
function sessionMembers(sid: number): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((member) => isAlive(member) && statFields(member)?.[3] === String(sid))
}

describe.skipIf(!sshTargetRuns)('the shell stack over an ssh target (sshd in a network namespace)', () => {
  // A process of the target is one in its namespace: with protocol version 1 the session host is the
  // `--stdio` process sshd runs; with version 2 that process relays to a socket session host started
  // detached on the target (the hello's pid is that one's), so it is in the namespace but not under sshd.
  it('the session host runs on the target, reached through its sshd, and the shell under it', () => {
    expect(host.processes()).toContain(sessionHostPid)
    expect(host.runsHere(sessionHostPid)).toBe(true)
    expect(host.runsHere(process.pid)).toBe(false)
    expect(host.served().some((member) => commandLine(member)?.includes('--stdio'))).toBe(true)
    expect(descendants(sessionHostPid).map((member) => member.pid)).toContain(pid)
    expect(host.runsHere(pid)).toBe(true)
  })

  // The stdio handoff: sshd gives the relay pipes, which the session host opens itself, so no process
  // copies the link's bytes between sshd and the session host.
  it('the session host reads and writes the pipes sshd gave the relay (the handoff was taken)', () => {
    const relay = host.served().find((member) => commandLine(member)?.includes('--stdio'))!
    const held = new Set(readdirSync(`/proc/${sessionHostPid}/fd`).map((fd) => readlinkOr(`/proc/${sessionHostPid}/fd/${fd}`)))
    for (const fd of [0, 1]) {
      const pipe = readlinkOr(`/proc/${relay}/fd/${fd}`)
      expect(pipe).toMatch(/^pipe:\[\d+\]$/)
      expect(held.has(pipe)).toBe(true)
    }
  })

  it('`true` settles stdin_read with exit 0, at the prompt', async () => {
    expect(await stack.run(id, 'true')).toMatchObject({ waitReason: 'stdin_read', exitCode: 0, input: { kind: 'prompt' } })
  })

  it('a python3 REPL: `1+1` settles stdin_read with 2', async () => {
    expect(await stack.run(id, 'python3 -q')).toMatchObject({ waitReason: 'stdin_read', input: { kind: 'program' } })
    expect(await stack.run(id, '1+1')).toMatchObject({ viewport: '1+1\n2\n>>> ', waitReason: 'stdin_read' })
    expect(await stack.run(id, 'exit()')).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 })
  })

  it('`read -s` is a password prompt, and the answer reaches the shell', async () => {
    expect(await stack.run(id, 'read -s -p "passphrase: " secret')).toMatchObject({ waitReason: 'stdin_read', input: { kind: 'password' } })
    expect(await stack.run(id, 'correct horse')).toMatchObject({ waitReason: 'stdin_read', input: { kind: 'prompt' } })
    expect(await stack.run(id, 'echo "length=${#secret}"')).toMatchObject({ viewport: expect.stringContaining('length=13\n') })
  })

  it('SIGINT stops `sleep 100`: the send settles at the prompt with 130', async () => {
    const send = stack.send(id, 'sleep 100')
    await eventually(() => commandLine(foregroundGroup(pid) ?? 0)?.[0]?.endsWith('sleep') === true, 'sleep to take the foreground')
    expect((await stack.terminals.signal(stack.agent, id, 'SIGINT')).delivered).toBe(true)
    expect(await send.done).toMatchObject({ waitReason: 'stdin_read', exitCode: 130 })
    await send.released
  })

  it('less is a screen program: stdin_read reading keys, its screen in the result; q leaves it', async () => {
    const started = await stack.run(id, 'seq 1 500 | TERM=xterm-256color less')
    expect({ waitReason: started.waitReason, input: started.input }).toEqual({
      waitReason: 'stdin_read',
      input: { kind: 'keys', alternateScreen: true, program: expect.objectContaining({ name: 'less' }) },
    })
    expect(started.screen?.lines.slice(0, 3)).toEqual(['1', '2', '3'])
    const down = await stack.run(id, 'j', { submit: false })
    expect(down.screen?.lines.slice(0, 2)).toEqual(['2', '3'])
    expect(await stack.run(id, 'q', { submit: false })).toMatchObject({ waitReason: 'stdin_read', input: { kind: 'prompt' } })
  })

  it('close leaves nothing of the session on the target, the TERM-ignoring child included', async () => {
    await stack.run(id, `bash -c 'trap "" TERM; exec sleep 1000' & echo started`)
    const tree: ProcessIdentity[] = [identify(pid)!, ...descendants(pid)]
    expect(tree.length).toBeGreaterThanOrEqual(2)
    expect(await stack.terminals.close(stack.agent, id)).toBe(true)
    expect(tree.filter((member) => stillRunning(member))).toEqual([])
    // The shell led its own session: no process of that session is left anywhere on the machine.
    expect(sessionMembers(pid)).toEqual([])
    // The session host itself stays for the next session of this target.
    expect(isAlive(sessionHostPid)).toBe(true)
  })

  it('unloading the composition ends its login on the target: nothing is left under sshd', async () => {
    expect(host.served().length).toBeGreaterThan(0)
    await stack.dispose()
    await eventually(() => host.served().length === 0, 'the login, its session host and its sessions to end')
  })
})
