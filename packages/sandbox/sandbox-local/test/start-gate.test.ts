import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { ensureRuntimeParent } from 'dsh-sandbox'
import { children, eventually, isAlive } from 'dsh-testkit'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  BLOCK_FD,
  type BwrapFacts,
  bwrapArgv,
  checkedBwrapArgv,
  EMPTY_MOUNT_PLAN,
  FifoPool,
  type MountPlan,
  probeBwrap,
  releaseHoldFifos,
  STALE_POOL_MS,
  StartGate,
  sweepStalePools,
} from 'dsh-sandbox-local/internal'
import { bwrapUnavailable, DEADLINE_MS, run, scratchDir } from './helpers'

/**
 * The host side of the mount check under real bubblewrap: a held start runs its command once
 * released, without the hold's descriptors, and a start whose outer bwrap ends while it is held
 * never runs (its init is killed, not left blocked).
 */

let facts: BwrapFacts
let workspace: Awaited<ReturnType<typeof scratchDir>>
const refusals: string[] = []
const pool = new FifoPool(() => ensureRuntimeParent())

/** A writable workspace with a pinned .git: the start is held. */
function heldArgv(gate: StartGate, script: string): Promise<string[]> {
  const plan: MountPlan = { ...EMPTY_MOUNT_PLAN, userNamespace: facts.userNamespace, pinned: [join(workspace.path, '.git')] }
  const policy = { mode: 'workspace-write' as const, workspaceRoot: workspace.path, cwd: workspace.path }
  return checkedBwrapArgv({ bwrapPath: facts.path, seccompFilter: facts.seccompFilter }, ['sh', '-c', script], policy, plan, (check) => gate.hold(check))
}

/** The pid a process's first child has, from /proc (the outer bwrap's only child is the sandbox's init). */
function firstChild(pid: number): number | undefined {
  return children(pid)[0]
}

describe.skipIf(bwrapUnavailable !== undefined)('the start gate, under real bubblewrap', () => {
  beforeAll(async () => {
    facts = await probeBwrap('bwrap')
  })

  beforeEach(async () => {
    refusals.length = 0
    workspace = await scratchDir('start-gate', '/var/tmp')
    mkdirSync(join(workspace.path, '.git'))
    writeFileSync(join(workspace.path, '.git/HEAD'), 'ref: refs/heads/main\n')
  })

  afterEach(async () => {
    await workspace?.remove()
  })

  it('runs the command once released, with none of the descriptors the hold used (seccomp, info, block)', async () => {
    const gate = new StartGate(pool, (message) => refusals.push(message))
    const argv = await heldArgv(gate, 'for fd in 3 4 5; do [ -e /proc/$$/fd/$fd ] && echo "LEAKED $fd"; done; echo COMMAND-RAN')
    const result = await run(argv)
    expect(result).toEqual({ code: 0, stdout: 'COMMAND-RAN\n', stderr: '' })
    expect(refusals).toEqual([])
  })

  it('kills a held init whose outer bwrap ended before the check, so it never runs the command nor waits forever', async () => {
    // Looks every 2 s: the outer bwrap is killed between two looks, while its init waits on the block descriptor.
    const gate = new StartGate(pool, (message) => refusals.push(message), {
      pollMs: 2_000,
      fastMs: DEADLINE_MS,
      idlePollMs: 2_000,
      spawnMs: DEADLINE_MS,
      setupMs: DEADLINE_MS,
    })
    const marker = join(workspace.path, 'ran')
    const argv = await heldArgv(gate, `touch ${marker}`)
    const outer = spawn(argv[0]!, argv.slice(1), { stdio: 'ignore' })
    const exited = new Promise((resolve) => outer.on('exit', resolve))
    const init = await eventually(() => {
      const pid = firstChild(outer.pid!)
      const syscall = pid === undefined ? '' : readFileSync(`/proc/${pid}/syscall`, 'latin1')
      return syscall.split(' ')[1] === `0x${BLOCK_FD}` && pid
    }, "the sandbox's init to wait on the block descriptor")
    outer.kill('SIGKILL')
    await exited
    await eventually(() => !isAlive(init), 'the orphaned init to be killed', DEADLINE_MS)
    expect(refusals).toEqual([expect.stringContaining('its bwrap ended before the check')])
    expect(existsSync(marker)).toBe(false)
  })

  it('fails closed before bwrap runs when the hold paths are not FIFOs, and leaves those files as they were', async () => {
    const info = join(workspace.path, 'info')
    const block = join(workspace.path, 'block')
    writeFileSync(info, 'precious\n')
    writeFileSync(block, 'precious\n')
    const marker = join(workspace.path, 'ran')
    const policy = { mode: 'workspace-write' as const, workspaceRoot: workspace.path, cwd: workspace.path }
    const launch = { bwrapPath: facts.path, seccompFilter: facts.seccompFilter }
    const argv = bwrapArgv(launch, ['touch', marker], policy, EMPTY_MOUNT_PLAN, { infoPath: info, blockPath: block })
    const result = await run(argv)
    expect(result.code).not.toBe(0)
    expect(existsSync(marker)).toBe(false)
    expect([readFileSync(info, 'utf8'), readFileSync(block, 'utf8')]).toEqual(['precious\n', 'precious\n'])
  })
})

describe('the FIFO pool', () => {
  it('removes stale pool directories of ended processes, and keeps fresh ones and those of running processes', () => {
    const parent = mkdtempSync(join(ensureRuntimeParent(), 'pool-sweep-test-'))
    try {
      const old = (Date.now() - STALE_POOL_MS - 60_000) / 1000
      // A pid far above any pid_max, so it never runs.
      const names = { staleEnded: 'sandbox-fifos-999999999-a', freshEnded: 'sandbox-fifos-999999999-b', staleRunning: `sandbox-fifos-${process.ppid}-c` }
      for (const name of Object.values(names)) mkdirSync(join(parent, name))
      utimesSync(join(parent, names.staleEnded), old, old)
      utimesSync(join(parent, names.staleRunning), old, old)
      sweepStalePools(parent)
      expect(readdirSync(parent).sort()).toEqual([names.freshEnded, names.staleRunning].sort())
    } finally {
      rmSync(parent, { recursive: true, force: true })
    }
  })

  it('closes and removes its unused FIFOs when disposed', async () => {
    const own = new FifoPool(() => ensureRuntimeParent())
    const hold = await own.take()
    const stock = readdirSync(dirname(hold.directory))
    expect(stock.length).toBeGreaterThan(1)
    const openFifos = () =>
      readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`).startsWith(dirname(hold.directory))
        } catch {
          return false
        }
      })
    expect(openFifos().length).toBeGreaterThan(2)
    own.dispose()
    releaseHoldFifos(hold)
    expect(existsSync(dirname(hold.directory))).toBe(false)
    expect(openFifos()).toEqual([])
  })
})
