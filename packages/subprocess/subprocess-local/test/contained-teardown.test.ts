import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, readlinkSync, rmdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { children, eventually, isAlive } from 'dsh-testkit'
import { cgroupFs, procFs } from '../src/internal'
import { parseHierarchies } from '../src/cgroup/mounts'
import { placeLimits } from '../src/cgroup/placement'
import { parseStat } from '../src/linux/stat-parser'
import { parseDisposition } from '../src/linux/status-parser'
import { BASH, BASH_ENV, capture, mountRuntime, pidFrom, runForPids } from './helpers'

// Teardown of sessions in cgroups of their own (per-session limits), on real processes: the listing
// proves quiescence, so each case checks that nothing of the tree is left and the cgroup goes too.
const LINUX = process.platform === 'linux'
const MOUNT_INFO = LINUX ? readFileSync('/proc/self/mountinfo', 'utf8') : ''
const placement = placeLimits(parseHierarchies(MOUNT_INFO, LINUX ? readFileSync('/proc/self/cgroup', 'utf8') : ''), cgroupFs)
const canLimit = process.getuid?.() === 0 && placement.unavailable.size === 0
const LIMITS = { maxProcesses: 256 }

let env: Awaited<ReturnType<typeof mountRuntime>> | undefined
const strays: number[] = []

afterEach(async () => {
  await env?.close()
  env = undefined
  for (const pid of strays.splice(0)) if (isAlive(pid)) process.kill(pid, 'SIGKILL')
})

/** The session cgroup directories `pid` is in. */
function sessionDirs(pid: number): string[] {
  const hierarchies = parseHierarchies(MOUNT_INFO, readFileSync(`/proc/${pid}/cgroup`, 'utf8'))
  return hierarchies.flatMap((hierarchy) => (hierarchy.ownDir && /\/session-\d+$/.test(hierarchy.ownDir) ? [hierarchy.ownDir] : []))
}

async function limitedShell(graceMs: number) {
  env = await mountRuntime()
  const handle = await env.spawn({ argv: BASH, env: BASH_ENV, graceMs, limits: LIMITS })
  const out = capture(handle)
  await out.waitFor(/PROMPT\$ $/)
  const dirs = sessionDirs(handle.pid)
  expect(dirs.length).toBeGreaterThan(0)
  return { handle, out, dirs }
}

function run(shell: Awaited<ReturnType<typeof limitedShell>>, command: string, names: string[]): Promise<number[]> {
  return runForPids(shell, command, names, strays)
}

/** The files this process holds open. */
function heldFiles(): string[] {
  return readdirSync('/proc/self/fd').flatMap((fd) => {
    try {
      return [readlinkSync(`/proc/self/fd/${fd}`)]
    } catch {
      return []
    }
  })
}

/** Resolves once every directory is gone: removal runs after terminate() resolved. */
function removed(dirs: readonly string[]) {
  return eventually(() => dirs.every((dir) => !existsSync(dir)), `the session cgroups ${dirs.join(', ')} to be removed`)
}

describe.skipIf(!canLimit)('terminate() of a session in cgroups', () => {
  it('closes an idle shell and removes its cgroups, releasing the task counter it held since the join', async () => {
    const shell = await limitedShell(5_000)
    const counter = shell.dirs.map((dir) => `${dir}/pids.current`).find((path) => existsSync(path))
    expect(counter).toBeDefined()
    expect(heldFiles()).toContain(counter)
    await shell.handle.terminate()
    expect(isAlive(shell.handle.pid)).toBe(false)
    expect(shell.handle.exit).toBeDefined()
    await removed(shell.dirs)
    expect(heldFiles()).not.toContain(counter)
  })

  it('signals the top-level process of an idle session before terminate() hands the turn back', async () => {
    env = await mountRuntime()
    const handle = await env.spawn({ argv: ['sleep', '600'], env: {}, graceMs: 5_000, limits: LIMITS })
    strays.push(handle.pid)
    const status = () => {
      try {
        return readFileSync(`/proc/${handle.pid}/status`, 'utf8')
      } catch {
        return undefined // reaped already
      }
    }
    await eventually(() => /^Name:\s+sleep$/m.test(status() ?? '') && /^State:\s+S/m.test(status() ?? ''), 'sleep to block')
    const closing = handle.terminate()
    // Read before any await. SIGTERM is fatal to sleep: once sent, the kernel has queued SIGKILL on its
    // thread (bit 8 of SigPnd), or sleep already woke to exit (no longer sleeping), or it is gone.
    // Without the signal it would still sleep, 600 s long, with nothing pending.
    const seen = status()
    const pending = BigInt(`0x${seen?.match(/^SigPnd:\s+([0-9a-f]+)$/m)?.[1] ?? '0'}`)
    const delivered = seen === undefined || !/^State:\s+S/m.test(seen) || (pending & (1n << 8n)) !== 0n
    expect(delivered, seen).toBe(true)
    await closing
    expect(isAlive(handle.pid)).toBe(false)
  })

  it('kills a TERM-ignorer at once, gives a TERM handler the grace, then kills it and what it forked', async () => {
    const graceMs = 400
    const shell = await limitedShell(graceMs)
    const [ignorer] = await run(shell, `sh -c 'trap "" TERM; echo IGN=$$; exec sleep 600' &`, ['IGN'])
    const script = `trap "echo caught; sleep 600 & echo LATE=\\$!" TERM; echo CATCH=$$; while :; do sleep 0.05; done`
    const [catcher] = await run(shell, `sh -c '${script}' &`, ['CATCH'])
    await eventually(() => readFileSync(`/proc/${ignorer}/comm`, 'utf8').trim() === 'sleep', 'the exec')
    await shell.handle.terminate()
    expect(shell.out.text()).toContain('caught')
    const late = await pidFrom(shell.out, 'LATE')
    strays.push(late)
    for (const pid of [ignorer!, catcher!, late]) expect(isAlive(pid)).toBe(false)
    await removed(shell.dirs)
  })

  it('kills disowned, double-forked, setsid and fully detached processes of the session', async () => {
    const shell = await limitedShell(5_000)
    const [disowned] = await run(shell, 'sleep 600 & disown; echo DISOWNED=$!', ['DISOWNED'])
    const [orphan] = await run(shell, '(sleep 601 & echo ORPHAN=$!)', ['ORPHAN'])
    const [daemon] = await run(shell, `setsid sh -c 'echo SETSID=$$; exec sleep 602' &`, ['SETSID'])
    // Left the session and the terminal: no /proc walk finds it, its cgroup membership does.
    const [detached] = await run(shell, '( setsid sleep 603 </dev/null >/dev/null 2>&1 & echo DETACHED=$! )', ['DETACHED'])
    await eventually(() => sessionDirs(detached!).length > 0, 'the detached sleep inside the session cgroup')
    await shell.handle.terminate()
    for (const pid of [disowned!, orphan!, daemon!, detached!]) expect(isAlive(pid)).toBe(false)
    await removed(shell.dirs)
  })

  it('kills what the top-level program forks from its own TERM trap while it exits', async () => {
    env = await mountRuntime()
    const script = `trap 'sleep 603 & echo TRAPKID=$!' TERM; echo READY; while :; do sleep 0.05; done`
    const handle = await env.spawn({ argv: ['sh', '-c', script], graceMs: 300, limits: LIMITS })
    const out = capture(handle)
    await out.waitFor(/READY/)
    const dirs = sessionDirs(handle.pid)
    await handle.terminate()
    const trapKid = await pidFrom(out, 'TRAPKID')
    strays.push(trapKid)
    expect(isAlive(trapKid)).toBe(false)
    expect(isAlive(handle.pid)).toBe(false)
    await removed(dirs)
  })

  it('closes a 20-process tree with a TERM-ignorer well inside the grace', async () => {
    // A grace far beyond the test's timeout: a terminate that waited it out fails the test.
    const graceMs = 600_000
    const shell = await limitedShell(graceMs)
    const command = `for i in $(seq 19); do sleep 700 & done; sh -c 'trap "" TERM; echo IGN=$$; exec sleep 700' & echo SPAWNED=1`
    await run(shell, command, ['IGN', 'SPAWNED'])
    const tree = await eventually(() => {
      const kids = children(shell.handle.pid)
      return kids.length >= 20 ? kids : undefined
    }, 'the tree')
    strays.push(...tree)
    await shell.handle.terminate()
    expect(tree.filter(isAlive)).toEqual([])
    await removed(shell.dirs)
  })

  it('reads the same SIGTERM/SIGHUP dispositions from stat as from status', async () => {
    const shell = await limitedShell(5_000)
    const [ignorer, catcher] = await run(
      shell,
      `sh -c 'trap "" TERM; echo IGN=$$; exec sleep 600' & sh -c 'trap "exit 0" TERM; echo CATCH=$$; while :; do sleep 0.05; done' &`,
      ['IGN', 'CATCH'],
    )
    await eventually(() => readFileSync(`/proc/${ignorer}/comm`, 'utf8').trim() === 'sleep', 'the exec')
    for (const pid of [shell.handle.pid, ignorer!, catcher!]) {
      const fromStat = parseStat(procFs.text(`/proc/${pid}/stat`))?.disposition
      expect(fromStat).toBeDefined()
      expect(fromStat).toEqual(parseDisposition(procFs.text(`/proc/${pid}/status`)))
    }
    expect(parseStat(procFs.text(`/proc/${ignorer}/stat`))?.disposition?.termIgnored).toBe(true)
    expect(parseStat(procFs.text(`/proc/${catcher}/stat`))?.disposition?.termHandled).toBe(true)
  })
})

/** Empty and remove a runtime's parent cgroup and whatever session cgroups are left under it. */
async function removeTree(parent: string): Promise<void> {
  for (const dir of [...cgroupFs.subdirectories(parent).map((name) => `${parent}/${name}`), parent]) {
    await eventually(() => {
      for (const pid of (cgroupFs.read(`${dir}/cgroup.procs`) ?? '').split('\n').filter(Boolean)) process.kill(Number(pid), 'SIGKILL')
      try {
        rmdirSync(dir)
        return true
      } catch {
        return !existsSync(dir)
      }
    }, `cgroup ${dir} to be removed`)
  }
}

const tsx = createRequire(import.meta.url).resolve('tsx/cli')
const fixture = fileURLToPath(new URL('./fixtures/closing-host.ts', import.meta.url))

describe.skipIf(!canLimit)('host exit right after a close', () => {
  it('removes the session cgroups synchronously when the host exits before the deferred removal ran', async () => {
    // Without exitCleanup: no watchdog and no exit guard for the trees; only the removal's own exit hook can remove them.
    const host = spawn(process.execPath, [tsx, '--conditions=dsh-source', fixture, '--no-exit-cleanup'], { stdio: ['ignore', 'pipe', 'inherit'] })
    let stdout = ''
    host.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
    })
    const code = await new Promise<number | null>((resolve) => host.on('exit', resolve))
    expect(code).toBe(0)
    const { dirs } = JSON.parse(stdout.trim()) as { dirs: string[] }
    expect(dirs.length).toBeGreaterThan(0)
    try {
      for (const dir of dirs) expect(existsSync(dir)).toBe(false)
    } finally {
      // The runtime's parents stay (the host did not unload): the next start's sweep would take them; this test does.
      for (const parent of new Set(dirs.map((dir) => dir.slice(0, dir.lastIndexOf('/'))))) await removeTree(parent)
    }
  })
})
