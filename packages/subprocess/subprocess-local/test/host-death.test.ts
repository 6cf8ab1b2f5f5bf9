import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, rmdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { commandLine, eventually, identify, isAlive, type ProcessIdentity, statFields, stillRunning } from 'dsh-testkit'
import { parseHierarchies } from '../src/cgroup/mounts'

const tsx = createRequire(import.meta.url).resolve('tsx/cli')
const fixture = fileURLToPath(new URL('./fixtures/killed-host.ts', import.meta.url))
const LINUX = process.platform === 'linux'
const ROOT = process.getuid?.() === 0

/** What the fixture host prints once its session's escapees run. */
interface Started {
  host: number
  shell: number
  limits: { maxProcesses?: number; maxMemoryBytes?: number; notApplied?: string }
  NOHUP: number
  SETSID: number
  DETACHED?: number
}

/** Everything a test started, so that a failing test still leaves nothing behind. */
let leftovers: { launcher: ChildProcess; identities: ProcessIdentity[]; dirs: string[] } | undefined

afterEach(async () => {
  if (!leftovers) return
  const { launcher, identities, dirs } = leftovers
  leftovers = undefined
  launcher.kill('SIGKILL')
  for (const identity of identities) if (stillRunning(identity)) process.kill(identity.pid, 'SIGKILL')
  // Session directories first, then their parents; a killed process takes a moment to leave.
  for (const dir of [...dirs].sort((a, b) => b.length - a.length)) {
    await eventually(() => removed(dir), `cgroup ${dir} to be removable`, 5000)
  }
})

function removed(dir: string): boolean {
  try {
    // A parent also holds the session cgroup of the runtime's warm launcher (it died with the hangup).
    for (const child of readdirSync(dir, { withFileTypes: true })) if (child.isDirectory()) rmdirSync(`${dir}/${child.name}`)
    rmdirSync(dir)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT'
  }
}

/** Start the fixture host (through tsx, which runs it in a child node); resolves once it printed its pids. */
async function startHost(...args: string[]): Promise<Started> {
  const launcher = spawn(process.execPath, [tsx, '--conditions=dsh-source', fixture, ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
  leftovers = { launcher, identities: [], dirs: [] }
  let stdout = ''
  launcher.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString()
  })
  const line = await eventually(() => stdout.includes('\n') && stdout.slice(0, stdout.indexOf('\n')), 'the fixture host to report its pids', 30_000)
  return JSON.parse(line) as Started
}

/** The watchdog of host `pid`: `ps` shows it as `/bin/sh -c <script> dsh-subprocess-watchdog <pid>`. */
function watchdogOf(host: number): ProcessIdentity | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const argv = commandLine(Number(entry))
    if (argv?.[3] === 'dsh-subprocess-watchdog' && argv[4] === String(host)) return identify(Number(entry))
  }
  return undefined
}

/** Live processes whose session id is `sid`. */
function sessionMembers(sid: number): number[] {
  return readdirSync('/proc').flatMap((entry) =>
    /^\d+$/.test(entry) && isAlive(Number(entry)) && statFields(Number(entry))?.[3] === String(sid) ? [Number(entry)] : [],
  )
}

/** The session cgroup directories `pid` is in (pids and memory), and their parents. */
function sessionCgroups(pid: number): string[] {
  const hierarchies = parseHierarchies(readFileSync('/proc/self/mountinfo', 'utf8'), readFileSync(`/proc/${pid}/cgroup`, 'utf8'))
  const sessions = hierarchies.flatMap((hierarchy) =>
    hierarchy.ownDir && /\/dsh-terminal-\d+-\d+\/session-\d+$/.test(hierarchy.ownDir) ? [hierarchy.ownDir] : [],
  )
  return [...new Set([...sessions, ...sessions.map((dir) => dirname(dir))])]
}

/** Identities of the host's session processes, recorded before the kill (a recycled pid is never mistaken for one). */
function identitiesOf(started: Started): ProcessIdentity[] {
  const pids = [started.shell, started.NOHUP, started.SETSID, ...(started.DETACHED ? [started.DETACHED] : [])]
  return pids.map((pid) => {
    const identity = identify(pid)
    if (!identity) throw new Error(`process ${pid} of the fixture host is not running`)
    return identity
  })
}

describe.skipIf(!LINUX)('an unconfined session dies with its SIGKILLed host (real processes)', () => {
  it.skipIf(!ROOT)('with limits (as root: cgroups): nohup, setsid and fully detached processes are killed and the session cgroups removed', async () => {
    const started = await startHost('--detached')
    const identities = identitiesOf(started)
    const dirs = sessionCgroups(started.DETACHED as number)
    const watchdog = watchdogOf(started.host)
    leftovers?.identities.push(...identities, ...(watchdog ? [watchdog] : []))
    leftovers?.dirs.push(...dirs)
    expect(started.limits.notApplied).toBeUndefined()
    // The pids and the memory session directory, and a parent each (one directory serves both under v2).
    expect(dirs.length).toBeGreaterThanOrEqual(2)
    expect(watchdog).toBeDefined()

    process.kill(started.host, 'SIGKILL')

    await eventually(() => identities.every((identity) => !stillRunning(identity)), 'the session processes to be gone', 15_000)
    await eventually(() => sessionMembers(started.shell).length === 0, 'nothing left in the shell session', 15_000)
    await eventually(() => dirs.every((dir) => !existsSync(dir)), 'the session cgroups to be removed', 15_000)
    await eventually(() => !stillRunning(watchdog as ProcessIdentity), 'the watchdog to exit', 15_000)
  })

  it('without cgroups: nohup and setsid processes are found by session id and terminal and killed', async () => {
    const started = await startHost('--no-limits')
    const identities = identitiesOf(started)
    const watchdog = watchdogOf(started.host)
    leftovers?.identities.push(...identities, ...(watchdog ? [watchdog] : []))
    expect(started.limits).toEqual({})
    expect(sessionCgroups(started.NOHUP)).toEqual([])
    expect(watchdog).toBeDefined()
    // The setsid'd sleep left the shell's session but kept the terminal.
    expect(statFields(started.SETSID)?.[3]).toBe(String(started.SETSID))

    process.kill(started.host, 'SIGKILL')

    await eventually(() => identities.every((identity) => !stillRunning(identity)), 'the session processes to be gone', 15_000)
    expect(sessionMembers(started.shell)).toEqual([])
    await eventually(() => !stillRunning(watchdog as ProcessIdentity), 'the watchdog to exit', 15_000)
  })

  it('(control) without the exit guard, and so without the watchdog, nohup and setsid processes outlive the host', async () => {
    const started = await startHost('--no-exit-cleanup')
    const identities = identitiesOf(started)
    leftovers?.identities.push(...identities)
    leftovers?.dirs.push(...sessionCgroups(started.NOHUP))
    expect(watchdogOf(started.host)).toBeUndefined()

    process.kill(started.host, 'SIGKILL')

    // The kernel's hangup ends the shell once the host's PTY master closes; the others ignore or miss it.
    await eventually(() => !stillRunning(identities[0] as ProcessIdentity), 'the shell to hang up', 15_000)
    expect(stillRunning(identities[1] as ProcessIdentity)).toBe(true)
    expect(stillRunning(identities[2] as ProcessIdentity)).toBe(true)
  })
})
