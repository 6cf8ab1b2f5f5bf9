import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { commandLine, eventually, identify, isAlive, type ProcessIdentity, statFields, stillRunning } from 'dsh-testkit'
import { CgroupLimiter } from '../src/internal'
import { JOIN_FAILED_STATUS, launcherCommand } from '../src/cgroup/launcher'
import { HostWatchdog } from '../src/watchdog/watchdog'
import { mountRuntime } from './helpers'

const LINUX = process.platform === 'linux'
const ROOT = process.getuid?.() === 0

/** Processes and watchdogs a test started, killed afterwards whatever happened. */
const started: ChildProcess[] = []
const watchdogs: HostWatchdog[] = []

afterEach(async () => {
  await Promise.all(watchdogs.splice(0).map((watchdog) => watchdog.dispose()))
  for (const child of started.splice(0)) {
    if (child.pid === undefined) continue
    try {
      process.kill(-child.pid, 'SIGKILL')
    } catch {
      // The whole group is gone already.
    }
  }
})

function newWatchdog(options: Partial<ConstructorParameters<typeof HostWatchdog>[0]> = {}) {
  const warnings: string[] = []
  const watchdog = new HostWatchdog({ warn: (message) => warnings.push(message), ...options })
  watchdogs.push(watchdog)
  return { watchdog, warnings }
}

/**
 * A session of its own (node's `detached` runs setsid): its leader and two members, one of them
 * nohup'd. Resolves with their identities once both members are running.
 */
async function session(): Promise<{ leader: ProcessIdentity; members: ProcessIdentity[] }> {
  const child = spawn('sh', ['-c', 'sleep 1001 & nohup sleep 1002 >/dev/null 2>&1 & wait'], { detached: true, stdio: 'ignore' })
  started.push(child)
  const leader = await eventually(() => child.pid !== undefined && identify(child.pid), 'the session leader')
  const members = await eventually(() => {
    const found = readdirSync('/proc').flatMap((entry) =>
      /^\d+$/.test(entry) && sessionOf(Number(entry)) === leader.pid && Number(entry) !== leader.pid ? [Number(entry)] : [],
    )
    return found.length === 2 && found.map((pid) => identify(pid) as ProcessIdentity)
  }, 'both session members')
  return { leader, members }
}

function sessionOf(pid: number): number | undefined {
  const sid = statFields(pid)?.[3]
  return sid === undefined ? undefined : Number(sid)
}

describe.skipIf(!LINUX)('host-death watchdog (real processes)', () => {
  it('kills a registered session when its stdin closes, and spares the rest', async () => {
    const { watchdog } = newWatchdog()
    const target = await session()
    const bystander = await session()
    // A leader registered with another start identity: its pid names another process now.
    const recycled = await session()
    watchdog.start()
    watchdog.watchSession(target.leader.pid, target.leader.started, undefined, true)
    watchdog.watchSession(recycled.leader.pid, '1', undefined, true)
    const pid = watchdog.pid as number
    expect(pid).toBeGreaterThan(0)

    await watchdog.dispose()

    await eventually(() => [target.leader, ...target.members].every((identity) => !stillRunning(identity)), 'the registered session to be gone')
    for (const identity of [bystander.leader, ...bystander.members, recycled.leader, ...recycled.members]) expect(stillRunning(identity)).toBe(true)
    expect(isAlive(pid)).toBe(false)
  })

  it('takes down a session its launcher registered in the directory (the host never wrote a line), and removes the directory', async () => {
    const { watchdog } = newWatchdog()
    const target = await session()
    const recycled = await session()
    watchdog.start()
    const registry = watchdog.registry as string
    expect(statSync(registry).mode & 0o777).toBe(0o700)
    writeFileSync(join(registry, String(target.leader.pid)), `${target.leader.started}\n`)
    // A file whose start identity names another process now, and one that is no identity at all.
    writeFileSync(join(registry, String(recycled.leader.pid)), '1\n')
    writeFileSync(join(registry, '1'), 'not a start\n')
    await watchdog.dispose()
    await eventually(() => [target.leader, ...target.members].every((identity) => !stillRunning(identity)), 'the registered session to be gone')
    for (const identity of [recycled.leader, ...recycled.members]) expect(stillRunning(identity)).toBe(true)
    expect(existsSync(registry)).toBe(false)
  })

  it('the launcher registers itself before the program runs, and runs nothing once its host is gone', async () => {
    const { watchdog } = newWatchdog()
    watchdog.start()
    const registry = watchdog.registry as string
    const run = (hostPid: number) => {
      const command = launcherCommand([], '/bin/sh', ['-c', 'echo ran'], { registry, hostPid })
      return spawnSync(command.file, command.args, { encoding: 'utf8' })
    }
    // Its parent is this process: registered (a file named by its pid, its start identity inside), then run.
    const ran = run(process.pid)
    expect(ran.stdout).toBe('ran\n')
    const files = readdirSync(registry)
    expect(files).toHaveLength(1)
    expect(readFileSync(join(registry, files[0]!), 'utf8').trim()).toMatch(/^\d+$/)
    // A parent that is not the host (the host died and it was reparented): the program never starts.
    const orphan = run(1)
    expect(orphan.status).toBe(JOIN_FAILED_STATUS)
    expect(orphan.stdout).toBe('')
    watchdog.forgetSession(Number(files[0]))
    // Forgotten at teardown: its file goes; the orphan's stays until the watchdog reads or removes the directory.
    expect(readdirSync(registry)).toHaveLength(1)
  })

  it('forgets a session the runtime tore down itself, and exits at once when nothing is registered', async () => {
    const { watchdog } = newWatchdog()
    const target = await session()
    watchdog.start()
    const pid = watchdog.pid as number
    watchdog.watchSession(target.leader.pid, target.leader.started, undefined, true)
    watchdog.forgetSession(target.leader.pid)
    await watchdog.dispose()
    expect(isAlive(pid)).toBe(false)
    for (const identity of [target.leader, ...target.members]) expect(stillRunning(identity)).toBe(true)
  })

  it('keeps a terminal registered again after it was forgotten (the deferred forget goes first)', async () => {
    const { watchdog } = newWatchdog()
    const target = await session()
    watchdog.start()
    watchdog.watchSession(target.leader.pid, target.leader.started, undefined, true)
    // Forgotten at a close, and the pid registered anew before the forget line was written.
    watchdog.forgetSession(target.leader.pid)
    watchdog.watchSession(target.leader.pid, target.leader.started, undefined, true)
    await watchdog.dispose()
    await eventually(() => [target.leader, ...target.members].every((identity) => !stillRunning(identity)), 'the registered session to be gone')
  })

  it('is started again, with every registration, after it died', async () => {
    const { watchdog, warnings } = newWatchdog()
    const target = await session()
    watchdog.start()
    watchdog.watchSession(target.leader.pid, target.leader.started, undefined, true)
    const first = watchdog.pid as number
    process.kill(first, 'SIGKILL')
    await eventually(() => watchdog.pid === undefined, 'the watchdog to be seen gone')
    expect(warnings.join('\n')).toMatch(/exited unexpectedly \(SIGKILL\); it is started again at the next spawn/)
    watchdog.start()
    expect(watchdog.pid).toBeGreaterThan(0)
    expect(watchdog.pid).not.toBe(first)
    await watchdog.dispose()
    await eventually(() => [target.leader, ...target.members].every((identity) => !stillRunning(identity)), 'the re-registered session to be gone')
  })

  it('warns once and starts nothing where it cannot run', async () => {
    const elsewhere = newWatchdog({ platform: 'darwin' })
    elsewhere.watchdog.start()
    elsewhere.watchdog.start()
    expect(elsewhere.watchdog.pid).toBeUndefined()
    expect(elsewhere.warnings).toEqual([
      "sessions outlive a host that is SIGKILLed: the host-death watchdog reads Linux's /proc and does not run on darwin; " +
        "only the PTY's hangup remains, which nohup'd and setsid'd processes survive",
    ])
    const noShell = newWatchdog({ shell: '/nonexistent/sh' })
    noShell.watchdog.start()
    expect(noShell.watchdog.pid).toBeUndefined()
    expect(noShell.warnings).toEqual([expect.stringMatching(/\/nonexistent\/sh, which runs the host-death watchdog, does not exist/)])
    await Promise.all([elsewhere.watchdog.dispose(), noShell.watchdog.dispose()])
  })

  it('is not started without exitCleanup, and leaves with an unloaded runtime', async () => {
    const before = new Set(watchdogPids())
    const quiet = await mountRuntime({ exitCleanup: false })
    await quiet.spawn({ argv: ['sleep', '30'] })
    expect(watchdogPids().filter((pid) => !before.has(pid))).toEqual([])
    await quiet.close()

    const mounted = await mountRuntime()
    const handle = await mounted.spawn({ argv: ['sleep', '30'] })
    const fresh = watchdogPids().filter((pid) => !before.has(pid))
    expect(fresh).toHaveLength(1)
    await mounted.close()
    expect(isAlive(fresh[0] as number)).toBe(false)
    expect(handle.exit).toBeDefined()
  })
})

describe.skipIf(!LINUX)('the runtime and its watchdog', () => {
  it('forgets a terminal whose program exited by itself (its pid and PTY may be reused by strangers)', async () => {
    const mounted = await mountRuntime()
    try {
      const handle = await mounted.spawn({ argv: ['sleep', '30'] })
      // The runtime's own watchdog (a TypeScript-private field, read here only).
      const watchdog = (mounted.runtime as unknown as { watchdog: HostWatchdog }).watchdog
      expect(watchdog.sessionPids).toContain(handle.pid)
      process.kill(handle.pid, 'SIGKILL')
      await handle.done
      await eventually(() => !watchdog.sessionPids.includes(handle.pid), 'the watchdog to forget the exited terminal')
    } finally {
      await mounted.close()
    }
  })
})

describe.skipIf(!LINUX || !ROOT)("host-death watchdog on this host's cgroups", () => {
  it('stops forks in a session cgroup, kills everything inside and removes it with its parent', async () => {
    const limiter = new CgroupLimiter({}, () => {})
    const { cgroup } = limiter.open({ maxProcesses: 64 })
    expect(cgroup).toBeDefined()
    const { watchdog } = newWatchdog()
    watchdog.start()
    for (const parent of limiter.parentDirs) watchdog.watchCgroup(parent)
    // A fork loop inside the session, held at its cap: it forks again as soon as anything dies.
    const command = cgroup?.launcher('/bin/sh', ['-c', 'while :; do sleep 1000 & done']) as { file: string; args: string[] }
    const looper = spawn(command.file, command.args, { detached: true, stdio: 'ignore' })
    started.push(looper)
    const parents = limiter.parentDirs
    const dirs = [...(cgroup?.dirs ?? []), ...parents]
    await eventually(() => (cgroup?.dirs ?? []).every((dir) => members(dir) >= 60), 'the session to fill up to its cap')

    await watchdog.dispose()

    await eventually(() => dirs.every((dir) => !existsSync(dir)), 'the session cgroups and their parent to be removed')
    expect(isAlive(looper.pid as number)).toBe(false)
    // Already gone counts as removed: the runtime then tells the watchdog to forget them.
    expect(limiter.dispose()).toEqual(parents)
  })
})

/** Pids of this process's watchdogs (`dsh-subprocess-watchdog <pid>` in their argv). */
function watchdogPids(): number[] {
  return readdirSync('/proc').flatMap((entry) => {
    const argv = /^\d+$/.test(entry) ? commandLine(Number(entry)) : undefined
    return argv?.[3] === 'dsh-subprocess-watchdog' && argv[4] === String(process.pid) && isAlive(Number(entry)) ? [Number(entry)] : []
  })
}

function members(dir: string): number {
  try {
    return readFileSync(`${dir}/cgroup.procs`, 'utf8').split('\n').filter(Boolean).length
  } catch {
    return 0
  }
}
