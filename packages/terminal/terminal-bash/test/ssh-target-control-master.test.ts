import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { commandLine, eventually, isAlive, type SshHost, startSshHost } from 'dsh-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Stack } from './support/stack'
import { type SshTarget, sshStack, sshTarget, sshTargetRuns } from './support/ssh-target'

/*
 * The ControlMaster options docs/ssh.md recommends, on a real sshd: the provider's connect command
 * becomes (the client of) a master that stays after the composition is unloaded, and a second
 * composition's connect goes through that master instead of logging in again.
 */

let host: SshHost
let controlDir: string
let masterOptions: string[]
let target: SshTarget
const stacks: Stack[] = []

/** `ssh -O <command>` against the master of this host; answers ssh's words (it prints them on stderr). */
function control(command: 'check' | 'exit'): string {
  const [file = 'ssh', ...args] = [...host.ssh.slice(0, 1), ...masterOptions, '-O', command, ...host.ssh.slice(1)]
  const result = spawnSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  return `${result.stdout}${result.stderr}`
}

beforeAll(async () => {
  if (!sshTargetRuns) return
  host = await startSshHost()
  controlDir = mkdtempSync(join(tmpdir(), 'dsh-ssh-control-'))
  masterOptions = ['-o', 'ControlMaster=auto', '-o', `ControlPath=${join(controlDir, '%C')}`, '-o', 'ControlPersist=60']
  const plain = sshTarget(host)
  // ssh takes the first value of an option: the master options go right after `ssh`.
  target = { ...plain, connect: [plain.connect[0]!, ...masterOptions, ...plain.connect.slice(1)] }
}, 30_000)

afterAll(async () => {
  for (const stack of stacks) await stack.dispose()
  if (host) control('exit')
  await host?.stop()
  target?.remove()
  if (controlDir) rmSync(controlDir, { recursive: true, force: true })
})

describe.skipIf(!sshTargetRuns)('an ssh target through a ControlMaster connection', () => {
  it('sessions run through the master, which outlives the composition; the next one reuses it', async () => {
    const first = await sshStack(target)
    stacks.push(first)
    const { sessionId } = await first.open()
    expect(await first.run(sessionId, 'echo through-$((2+3))')).toMatchObject({ viewport: expect.stringContaining('through-5\n'), waitReason: 'stdin_read' })
    const master = Number(/pid=(\d+)/.exec(control('check'))?.[1])
    expect(isAlive(master)).toBe(true)
    await first.dispose()
    stacks.pop()
    await eventually(() => !host.served().some((pid) => commandLine(pid)?.includes('--stdio')), 'the first session host to end')
    expect(isAlive(master)).toBe(true)

    const second = await sshStack(target)
    stacks.push(second)
    const next = await second.open()
    expect(await second.run(next.sessionId, 'echo again')).toMatchObject({ viewport: expect.stringContaining('again\n'), waitReason: 'stdin_read' })
    // The same master carried the second login: no new master was made.
    expect(Number(/pid=(\d+)/.exec(control('check'))?.[1])).toBe(master)
  }, 60_000)
})
