import { existsSync, readFileSync, readlinkSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import type { SubprocessTerminalHandle, TerminalSpawnSpec } from 'dsh-subprocess'
import { commandLine, descendants, eventually, installed, isAlive } from 'dsh-testkit'
import { cgroupFs, type LocalSubprocessRuntime } from '../src/internal'
import { parseHierarchies } from '../src/cgroup/mounts'
import { placeLimits } from '../src/cgroup/placement'
import { WARM_LAUNCHER_NAME } from '../src/warm/launcher-script'
import { WARM_LAUNCHERS_PER_LIMITS } from '../src/warm/warm-launchers'
import { BASH, BASH_ENV, capture, mountRuntime } from './helpers'

const LINUX = process.platform === 'linux'
const MOUNT_INFO = LINUX ? readFileSync('/proc/self/mountinfo', 'utf8') : ''
const placement = placeLimits(parseHierarchies(MOUNT_INFO, LINUX ? readFileSync('/proc/self/cgroup', 'utf8') : ''), cgroupFs)
/** Warm launchers exist where limits are enforced (root, pids and memory placed) and perl runs them. */
const canWarm = process.getuid?.() === 0 && placement.unavailable.size === 0
if (process.env.CI === 'true' && LINUX && !installed('perl')) throw new Error('perl is required for the warm-launch tests in CI')

const MiB = 1024 * 1024
const LIMITS = { maxProcesses: 64, maxMemoryBytes: 256 * MiB }
/** Values the frame must carry untouched: newline, CR, ^C, ^D, ^Q, ^S, DEL, `=`, UTF-8, empty, more than the terminal's 4 KiB input buffer. */
const TRICKY = `two\nlines \r \x03 \x04 \x11 \x13 \x7f a=b é ${'x'.repeat(6000)}`
const SPEC: Partial<TerminalSpawnSpec> & Pick<TerminalSpawnSpec, 'argv'> = {
  argv: BASH,
  env: { ...BASH_ENV, DSH_TEST_TRICKY: TRICKY, DSH_TEST_EMPTY: '' },
  limits: LIMITS,
  rows: 30,
  cols: 101,
}

let env: Awaited<ReturnType<typeof mountRuntime>> | undefined

afterEach(async () => {
  await env?.close()
  env = undefined
})

/** The session cgroup directories `pid` is in (pids, memory). */
function sessionDirs(pid: number): string[] {
  const hierarchies = parseHierarchies(MOUNT_INFO, readFileSync(`/proc/${pid}/cgroup`, 'utf8'))
  return [...new Set(hierarchies.flatMap((hierarchy) => (hierarchy.ownDir?.match(/\/session-\d+$/) ? [hierarchy.ownDir] : [])))].sort()
}

/** Everything a program could tell about how it was started, read after the shell's first prompt. */
async function startFacts(shell: SubprocessTerminalHandle) {
  const out = capture(shell)
  await out.waitFor(/PROMPT\$ $/)
  const greeting = out.text()
  const from = out.length()
  await shell.write("stty -a; printf 'E%sD\\n' N\r")
  const stty = (await out.waitFor(/stty -a[^\n]*\n([\s\S]*)END\r\n/, from))[1]
  const dirs = sessionDirs(shell.pid)
  return {
    greeting,
    stty,
    environ: readFileSync(`/proc/${shell.pid}/environ`),
    cmdline: readFileSync(`/proc/${shell.pid}/cmdline`, 'utf8'),
    cwd: readlinkSync(`/proc/${shell.pid}/cwd`),
    limits: shell.limits,
    dirs,
    caps: dirs.map((dir) => ['pids.max', 'memory.limit_in_bytes', 'memory.max'].map((file) => cgroupFs.read(`${dir}/${file}`)?.trim())),
  }
}

function warmLaunchers(): number[] {
  return descendants(process.pid).flatMap(({ pid }) => (commandLine(pid)?.includes(WARM_LAUNCHER_NAME) ? [pid] : []))
}

describe.skipIf(!canWarm)('warm launchers (real bash, real cgroups)', () => {
  it('starts a limited spawn in the launcher kept warm, indistinguishable from a fresh spawn', async () => {
    env = await mountRuntime()
    const runtime = env.runtime as LocalSubprocessRuntime
    const cold = await env.spawn(SPEC)
    const waiting = await eventually(() => runtime.warmPids[0], 'a warm launcher to wait')
    // It joined its own session cgroups before any program was named.
    expect(sessionDirs(waiting)).toHaveLength(2)
    expect(sessionDirs(waiting)).not.toEqual(sessionDirs(cold.pid))
    const warm = await env.spawn(SPEC)
    expect(warm.pid).toBe(waiting)

    const [fresh, served] = [await startFacts(cold), await startFacts(warm)]
    // Same bytes first (no launcher output leaks), same environment byte for byte and in order,
    // same argv, cwd, terminal size and modes, the same caps in cgroups of its own.
    expect(served.greeting).toBe(fresh.greeting)
    expect(served.environ.toString('utf8').split('\0')).toEqual(fresh.environ.toString('utf8').split('\0'))
    expect(served.environ.toString('utf8')).toContain(`DSH_TEST_TRICKY=${TRICKY}\0`)
    expect(served.cmdline).toBe(fresh.cmdline)
    expect(served.cwd).toBe(fresh.cwd)
    expect(served.stty).toBe(fresh.stty)
    expect(served.stty).toMatch(/rows 30; columns 101/)
    expect(served.limits).toEqual(LIMITS)
    expect(served.caps).toEqual(fresh.caps)
    expect(served.dirs).toHaveLength(2)
    expect(served.dirs).not.toEqual(fresh.dirs)
    // The one taken is replaced: two wait again.
    await eventually(() => runtime.warmPids.length === WARM_LAUNCHERS_PER_LIMITS && !runtime.warmPids.includes(waiting), 'the next warm launcher')
  })

  it('does not use a launcher that died while it waited; its cgroups are removed', async () => {
    env = await mountRuntime()
    const runtime = env.runtime as LocalSubprocessRuntime
    await env.spawn(SPEC)
    const waiting = await eventually(() => runtime.warmPids[0], 'a warm launcher to wait')
    const dirs = sessionDirs(waiting)
    process.kill(waiting, 'SIGKILL')
    await eventually(() => !runtime.warmPids.includes(waiting), 'the dead launcher to be dropped')
    await eventually(() => dirs.every((dir) => !existsSync(dir)), 'its cgroups to be removed')
    const shell = await env.spawn(SPEC)
    expect(shell.pid).not.toBe(waiting)
    await capture(shell).waitFor(/PROMPT\$ $/)
  })

  it('unloading the runtime ends the waiting launcher and removes its cgroups', async () => {
    env = await mountRuntime()
    const runtime = env.runtime as LocalSubprocessRuntime
    await env.spawn(SPEC)
    const waiting = await eventually(() => runtime.warmPids.length === WARM_LAUNCHERS_PER_LIMITS && runtime.warmPids, 'the warm launchers to wait')
    const dirs = waiting.flatMap(sessionDirs)
    await env.close()
    env = undefined
    for (const pid of waiting) expect(isAlive(pid)).toBe(false)
    for (const dir of dirs) expect(existsSync(dir)).toBe(false)
  })

  it('keeps no launcher with warmLaunch off, nor for spawns without limits', async () => {
    env = await mountRuntime({ warmLaunch: false })
    await env.spawn(SPEC)
    const shell = await env.spawn(SPEC)
    await capture(shell).waitFor(/PROMPT\$ $/)
    expect(warmLaunchers()).toEqual([])
    await env.close()
    env = await mountRuntime()
    const unlimited = await env.spawn({ ...SPEC, limits: undefined })
    await capture(unlimited).waitFor(/PROMPT\$ $/)
    const second = await env.spawn({ ...SPEC, limits: undefined })
    await capture(second).waitFor(/PROMPT\$ $/)
    expect(warmLaunchers()).toEqual([])
  })
})
