import { readdirSync, readlinkSync, readFileSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import type { SubprocessTerminalHandle, TerminalSpawnSpec } from 'dsh-subprocess'
import { cgroupFs } from '../src/internal'
import { parseHierarchies } from '../src/cgroup/mounts'
import { placeLimits } from '../src/cgroup/placement'
import { BASH, BASH_ENV, capture, mountRuntime } from './helpers'

// node-pty forks the host to start each PTY's first process, and the host's other PTY masters are
// not close-on-exec: a session started after others held their masters, so it could read and type
// into every one of them (from inside a sandbox too). Each way a terminal starts — cold without
// limits, cold under limits, and from a warm launcher — must hand its program descriptors 0–2 only.
const LINUX = process.platform === 'linux'
const placement = LINUX
  ? placeLimits(parseHierarchies(readFileSync('/proc/self/mountinfo', 'utf8'), readFileSync('/proc/self/cgroup', 'utf8')), cgroupFs)
  : undefined
/** Limits are placed only as root with pids and memory available (as on CI); warm launchers need them. */
const canLimit = process.getuid?.() === 0 && placement?.unavailable.size === 0
const LIMITS = { maxProcesses: 64, maxMemoryBytes: 256 * 1024 * 1024 }

let env: Awaited<ReturnType<typeof mountRuntime>> | undefined
afterEach(async () => {
  await env?.close()
  env = undefined
})

/** The descriptors `pid` holds, with what each names. */
function descriptors(pid: number): Record<string, string> {
  const found: Record<string, string> = {}
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      found[fd] = readlinkSync(`/proc/${pid}/fd/${fd}`)
    } catch {
      // closed while listed
    }
  }
  return found
}

/** Open three shells (their masters stay open in the host), then one more the way `spec` says. */
async function afterOthers(spec: Partial<TerminalSpawnSpec>): Promise<SubprocessTerminalHandle> {
  const mounted = env as NonNullable<typeof env>
  for (let index = 0; index < 3; index++) await capture(await mounted.spawn({ argv: BASH, env: BASH_ENV, ...spec })).waitFor(/PROMPT\$ $/)
  const last = await mounted.spawn({ argv: BASH, env: BASH_ENV, ...spec })
  await capture(last).waitFor(/PROMPT\$ $/)
  return last
}

describe.skipIf(!LINUX)('what a terminal inherits from the host', () => {
  it('is nothing beyond its PTY when started cold without limits', async () => {
    env = await mountRuntime({ warmLaunch: false })
    const shell = await afterOthers({})
    // bash keeps a copy of its terminal at 255; nothing else.
    expect(descriptors(shell.pid)).toEqual({
      0: expect.stringMatching(/^\/dev\/pts\//),
      1: expect.anything(),
      2: expect.anything(),
      255: expect.stringMatching(/^\/dev\/pts\//),
    })
  })

  it.runIf(canLimit)('is nothing beyond its PTY when started cold under limits', async () => {
    env = await mountRuntime({ warmLaunch: false })
    const shell = await afterOthers({ limits: LIMITS })
    expect(Object.values(descriptors(shell.pid)).filter((target) => target === '/dev/ptmx')).toEqual([])
    expect(Object.keys(descriptors(shell.pid)).sort()).toEqual(['0', '1', '2', '255'])
  })

  it.runIf(canLimit)('is nothing beyond its PTY when started from a warm launcher made after other sessions', async () => {
    env = await mountRuntime({ warmLaunch: true })
    // The launchers that serve these opens are refills, started while the earlier shells' masters were open.
    const shell = await afterOthers({ limits: LIMITS })
    expect(Object.keys(descriptors(shell.pid)).sort()).toEqual(['0', '1', '2', '255'])
  })
})
