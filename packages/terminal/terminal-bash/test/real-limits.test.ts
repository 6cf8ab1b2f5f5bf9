import { existsSync, readFileSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { CgroupLimiter, type LocalSubprocessRuntime } from 'dsh-subprocess-local/internal'
import { eventually } from 'dsh-testkit'
import { PATIENT, startStack, type Stack } from './support/stack'

/** This host can enforce both caps (root, with pids and memory controllers placed). */
const canLimit = process.getuid?.() === 0 && new CgroupLimiter({}, () => {}).placement.unavailable.size === 0

let stack: Stack | undefined
afterEach(async () => {
  await stack?.dispose()
  stack = undefined
})

/** The pids cgroup directory a process is in: its v1 `pids` line under that mount, else its v2 line. */
function pidsCgroup(pid: number): string {
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' '))
  const mountOf = (type: string, option?: string) =>
    mounts.find((fields) => fields[fields.indexOf('-') + 1] === type && (!option || fields[fields.indexOf('-') + 3]?.split(',').includes(option)))?.[4]
  const lines = readFileSync(`/proc/${pid}/cgroup`, 'utf8')
    .split('\n')
    .map((line) => line.split(':'))
  const legacy = lines.find((fields) => fields[1]?.split(',').includes('pids'))
  if (legacy) return `${mountOf('cgroup', 'pids')}${legacy.slice(2).join(':')}`
  return `${mountOf('cgroup2')}${lines
    .find((fields) => fields[0] === '0')
    ?.slice(2)
    .join(':')}`
}

// Forks sleeping children until the kernel refuses one, then reports how far it got.
const FORK_UNTIL_REFUSED =
  'python3 -c $\'import os, time\\nn = 0\\ntry:\\n    while n < 500:\\n        if os.fork() == 0:\\n            time.sleep(60)\\n            os._exit(0)\\n        n += 1\\nexcept OSError as e:\\n    print("refused after", n, e.strerror)\''

describe.skipIf(!canLimit)('configured caps on a real shell', () => {
  it('stops forks at maxProcesses inside the session; closing removes the session and its cgroup', async () => {
    stack = await startStack({ ...PATIENT, maxProcesses: 48 })
    const { sessionId, pid } = await stack.open()
    const cgroup = pidsCgroup(pid as number)
    expect(cgroup).toMatch(/\/dsh-terminal-\d+-\d+\/session-\d+$/)
    expect(readFileSync(`${cgroup}/pids.max`, 'utf8').trim()).toBe('48')
    const result = await stack.run(sessionId, FORK_UNTIL_REFUSED)
    expect(result).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 })
    expect(result.viewport).toMatch(/refused after \d+ Resource temporarily unavailable/)
    expect(Number(/refused after (\d+)/.exec(result.viewport)?.[1])).toBeLessThan(48)
    expect(await stack.terminals.close(stack.agent, sessionId)).toBe(true)
    await eventually(() => !existsSync(cgroup), 'the session cgroup to be removed (after the close resolved)')
  })

  it('serves a later open from the warm launcher: a fresh shell in capped cgroups of its own, with its own id, cwd and marker', async () => {
    stack = await startStack({ ...PATIENT, maxProcesses: 48 })
    const runtime = stack.root.subprocess as LocalSubprocessRuntime
    const first = await stack.open()
    const waiting = await eventually(() => runtime.warmPids[0], 'a warm launcher to wait')
    const second = await stack.open({ cwd: '/usr' })
    expect(second.pid).toBe(waiting)
    const cgroup = pidsCgroup(waiting)
    expect(cgroup).toMatch(/\/dsh-terminal-\d+-\d+\/session-\d+$/)
    expect(cgroup).not.toBe(pidsCgroup(first.pid as number))
    expect(readFileSync(`${cgroup}/pids.max`, 'utf8').trim()).toBe('48')
    // The marker prompt settles the send; the nonce left the environment at the first prompt, as in a cold shell.
    const result = await stack.run(second.sessionId, 'echo "id=$DSH_TERMINAL_SESSION_ID pwd=$(pwd -P) nonce=${DSH_PROMPT_NONCE-unset} pid=$$"')
    expect(result).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 })
    expect(result.viewport).toContain(`id=${second.sessionId} pwd=/usr nonce=unset pid=${waiting}`)
    // What the shell forks starts inside the session's cgroup.
    const child = await stack.run(second.sessionId, 'cat /proc/self/cgroup')
    expect(child.viewport).toContain(cgroup.slice(cgroup.indexOf('/dsh-terminal-')))
  })

  it("starts the shell in the host's own cgroups when both caps are 0", async () => {
    stack = await startStack({ ...PATIENT, maxProcesses: 0, maxMemoryBytes: 0 })
    const { pid } = await stack.open()
    expect(readFileSync(`/proc/${pid}/cgroup`, 'utf8')).toBe(readFileSync('/proc/self/cgroup', 'utf8'))
  })
})
