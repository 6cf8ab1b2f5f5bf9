import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { isSubprocessError, type SubprocessTerminalHandle } from 'dsh-subprocess'
import { cgroupFs } from '../src/internal'
import { commandLine, descendants, eventually, isAlive } from 'dsh-testkit'
import { parseHierarchies } from '../src/cgroup/mounts'
import { placeLimits } from '../src/cgroup/placement'
import { FakeCgroupFiles, mountLine } from './fake-cgroup-files'
import { BASH, BASH_ENV, capture, mountRuntime, pidFrom, PYTHON } from './helpers'

/** cgroups and /proc exist only on Linux; elsewhere every test here but the last skips. */
const LINUX = process.platform === 'linux'
const MOUNT_INFO = LINUX ? readFileSync('/proc/self/mountinfo', 'utf8') : ''
const placement = placeLimits(parseHierarchies(MOUNT_INFO, LINUX ? readFileSync('/proc/self/cgroup', 'utf8') : ''), cgroupFs)
/** This host can create both kinds of cgroup (as root, with pids and memory placed). */
const canLimit = process.getuid?.() === 0 && placement.unavailable.size === 0

const MiB = 1024 * 1024

let env: Awaited<ReturnType<typeof mountRuntime>> | undefined

afterEach(async () => {
  await env?.close()
  env = undefined
})

/** The directories of the pids and memory cgroups `pid` is in, read from /proc/<pid>/cgroup. */
function cgroupDirs(pid: number): { pids: string; memory: string } {
  const hierarchies = parseHierarchies(MOUNT_INFO, readFileSync(`/proc/${pid}/cgroup`, 'utf8'))
  const dirOf = (controller: string) => {
    const legacy = hierarchies.find((hierarchy) => hierarchy.controllers.includes(controller))
    return (legacy ?? hierarchies.find((hierarchy) => hierarchy.version === 2))?.ownDir ?? ''
  }
  return { pids: dirOf('pids'), memory: dirOf('memory') }
}

function limitFiles(dirs: { pids: string; memory: string }) {
  const memoryFile = existsSync(`${dirs.memory}/memory.max`) ? 'memory.max' : 'memory.limit_in_bytes'
  return {
    pids: () => readFileSync(`${dirs.pids}/pids.max`, 'utf8').trim(),
    memory: () => readFileSync(`${dirs.memory}/${memoryFile}`, 'utf8').trim(),
  }
}

async function prompt(shell: SubprocessTerminalHandle) {
  const out = capture(shell)
  await out.waitFor(/PROMPT\$ $/)
  return out
}

describe.skipIf(!canLimit)("per-session limits on this host's cgroups", () => {
  it('runs the session in cgroups of its own with the limits written, and removes them after close', async () => {
    env = await mountRuntime()
    const shell = await env.spawn({ argv: BASH, env: BASH_ENV, limits: { maxProcesses: 64, maxMemoryBytes: 256 * MiB } })
    expect(shell.limits).toEqual({ maxProcesses: 64, maxMemoryBytes: 256 * MiB })
    const dirs = cgroupDirs(shell.pid)
    for (const dir of Object.values(dirs)) expect(dir).toMatch(new RegExp(`/dsh-terminal-${process.pid}-\\d+/session-\\d+$`))
    expect(limitFiles(dirs).pids()).toBe('64')
    expect(limitFiles(dirs).memory()).toBe(String(256 * MiB))
    // The spawn resolves once the launcher joined; it execs the program right after (same pid).
    await eventually(() => /bash$/.test(commandLine(shell.pid)?.[0] ?? ''), 'the launcher to exec bash under its own pid')
    const out = await prompt(shell)
    await shell.write('sleep 300 & echo JOB=$!\r')
    const job = await pidFrom(out, 'JOB')
    expect(cgroupDirs(job)).toEqual(dirs)
    await shell.terminate()
    expect(isAlive(job)).toBe(false)
    // Teardown proved them empty; the removal itself runs after terminate() resolved.
    await eventually(() => Object.values(dirs).every((dir) => !existsSync(dir)), 'the session cgroups to be removed')
    const parents = Object.values(dirs).map((dir) => dir.slice(0, dir.lastIndexOf('/')))
    await env.close()
    env = undefined
    for (const parent of parents) expect(existsSync(parent)).toBe(false)
  })

  it('stops a fork loop at the process limit while the host keeps forking', async () => {
    env = await mountRuntime()
    const shell = await env.spawn({ argv: BASH, env: BASH_ENV, limits: { maxProcesses: 64 } })
    const dirs = cgroupDirs(shell.pid)
    const out = await prompt(shell)
    await shell.write('for i in $(seq 2000); do sleep 30 & done\r')
    await out.waitFor(/fork: (retry: )?Resource temporarily unavailable/)
    const inside = Number(readFileSync(`${dirs.pids}/pids.current`, 'utf8'))
    expect(inside).toBeLessThanOrEqual(64)
    expect(descendants(shell.pid).length).toBeLessThan(64)
    // The host is not in the session's cgroup: it still forks.
    expect(spawnSync('true').status).toBe(0)
    const tree = descendants(shell.pid)
    await shell.terminate()
    expect(tree.filter((member) => isAlive(member.pid))).toEqual([])
    await eventually(() => !existsSync(dirs.pids), 'the session cgroup to be removed')
  })

  it('kills a session process that escaped the tree, through its cgroup', async () => {
    env = await mountRuntime()
    const shell = await env.spawn({ argv: BASH, env: BASH_ENV, limits: { maxProcesses: 64 } })
    const dirs = cgroupDirs(shell.pid)
    const out = await prompt(shell)
    // Double fork plus setsid with stdio away from the PTY: no tree walk or session scan finds it.
    await shell.write('( setsid sleep 300 </dev/null >/dev/null 2>&1 & echo ESCAPED=$! )\r')
    const escaped = await pidFrom(out, 'ESCAPED')
    await eventually(() => cgroupDirs(escaped).pids === dirs.pids, 'the escaped sleep inside the session cgroup')
    await shell.terminate()
    expect(isAlive(escaped)).toBe(false)
    await eventually(() => !existsSync(dirs.pids), 'the session cgroup to be removed')
  })

  it('enforces the memory limit inside the session', async () => {
    env = await mountRuntime()
    const shell = await env.spawn({ argv: BASH, env: BASH_ENV, limits: { maxMemoryBytes: 64 * MiB } })
    const out = await prompt(shell)
    const from = out.length()
    await shell.write(`${PYTHON} -c "b = b'x' * (512 << 20)"; echo STATUS=$?\r`)
    // Killed by the kernel's OOM killer (128 + SIGKILL) or refused with a MemoryError (1).
    expect(['137', '1']).toContain(String(await pidFrom(out, 'STATUS', from)))
    expect(spawnSync(PYTHON, ['-c', "b = b'x' * (128 << 20)"]).status).toBe(0)
  })

  it('does not mistake a program that ends at once for a failed join', async () => {
    env = await mountRuntime()
    const handle = await env.spawn({ argv: ['sh', '-c', 'echo bye; exit 125'], limits: { maxProcesses: 8 } })
    expect(await handle.done).toEqual({ exitCode: 125, signal: null })
    expect(capture(handle).text()).toBe('bye\r\n')
  })

  it('sweeps the parents left by dead hosts when a runtime starts', async () => {
    const dead = spawnSync('true').pid
    const stale = placement.hierarchies.map((hierarchy) => `${hierarchy.base}/dsh-terminal-${dead}-1`)
    for (const dir of stale) mkdirSync(`${dir}/session-1`, { recursive: true })
    env = await mountRuntime()
    for (const dir of stale) expect(existsSync(dir)).toBe(false)
  })
})

describe('per-session limits where they cannot be enforced', () => {
  it.skipIf(!LINUX)('fails the spawn when the launcher cannot join, leaving nothing behind', async () => {
    // The limiter believes in a cgroup tree that does not exist on disk: the real launcher's write fails.
    const files = new FakeCgroupFiles({ '/bin/sh': '', '/nonexistent-dsh-cgroup/pids/cgroup.procs': '' })
    env = await mountRuntime({}, { cgroups: { mountInfo: () => mountLine('/nonexistent-dsh-cgroup/pids', 1, ['pids']), selfCgroup: () => '3:pids:/', files } })
    const before = new Set(descendants(process.pid).map((member) => member.pid))
    const error = await env.spawn({ argv: BASH, env: BASH_ENV, limits: { maxProcesses: 64 } }).catch((caught: unknown) => caught)
    expect(isSubprocessError(error, 'SPAWN_FAILED')).toBe(true)
    expect((error as Error).message).toMatch(
      /^the terminal could not join its cgroups and was not started: .*dsh-subprocess-local: could not join cgroup \/nonexistent-dsh-cgroup\/pids\/dsh-terminal-\d+-\d+\/session-1; the terminal was not started$/,
    )
    // The host-death watchdog started for the spawn stays with the runtime (it is a helper, not part of the session).
    const watchdog = (pid: number) => commandLine(pid)?.[3] === 'dsh-subprocess-watchdog'
    expect(descendants(process.pid).filter((member) => !before.has(member.pid) && !watchdog(member.pid))).toEqual([])
    const [parent] = files.subdirectories('/nonexistent-dsh-cgroup/pids')
    expect(files.subdirectories(`/nonexistent-dsh-cgroup/pids/${parent}`)).toEqual([])
  })

  it.skipIf(!LINUX)('starts sessions without caps, says so once in the log and in the handle', async () => {
    env = await mountRuntime({}, { cgroups: { mountInfo: () => '', selfCgroup: () => '' } })
    const warnings: string[] = []
    env.root.logger.exporter({
      colors: 0,
      levels: { default: 3 },
      export: (message) => void (message.type === 'warn' && warnings.push(String(message.args[1] ?? message.args[0]))),
    })
    for (let round = 0; round < 2; round++) {
      const shell = await env.spawn({ argv: BASH, env: BASH_ENV, limits: { maxProcesses: 64, maxMemoryBytes: 256 * MiB } })
      expect(shell.limits).toEqual({ notApplied: 'no cgroup filesystem is mounted' })
      expect(readFileSync(`/proc/${shell.pid}/cgroup`, 'utf8')).toBe(readFileSync('/proc/self/cgroup', 'utf8'))
      await prompt(shell)
    }
    expect(warnings.filter((warning) => warning.startsWith('per-session limits'))).toEqual([
      'per-session limits are not enforced: no cgroup filesystem is mounted; sessions start without them',
    ])
    // What that costs if the host is SIGKILLed, also said once.
    expect(warnings.filter((warning) => warning.startsWith('sessions without a cgroup'))).toHaveLength(1)
  })

  it.skipIf(!LINUX)("spawns the program itself, in the host's cgroups, when no limit is asked for", async () => {
    env = await mountRuntime()
    const shell = await env.spawn({ argv: BASH, env: BASH_ENV })
    expect(shell.limits).toEqual({})
    expect(readFileSync(`/proc/${shell.pid}/cgroup`, 'utf8')).toBe(readFileSync('/proc/self/cgroup', 'utf8'))
    await prompt(shell)
  })

  it('rejects invalid limits before anything starts', async () => {
    env = await mountRuntime()
    const error = await env.spawn({ argv: BASH, limits: { maxProcesses: 0 } }).catch((caught: unknown) => caught)
    expect(isSubprocessError(error, 'INVALID_SPEC')).toBe(true)
    expect((error as Error).message).toBe('limits.maxProcesses must be a positive integer (or left out for no limit), got 0')
    expect(execFileSync('true')).toBeDefined()
  })
})
