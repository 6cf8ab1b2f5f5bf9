import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { ensureRuntimeParent } from 'dsh-sandbox'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  type BwrapFacts,
  bwrapArgv,
  checkedBwrapArgv,
  EMPTY_MOUNT_PLAN,
  FifoPool,
  MOUNT_CHECK_FAILED,
  type MountPlan,
  probeBwrap,
  StartGate,
} from 'dsh-sandbox-local/internal'
import { bwrapUnavailable, run, runToFile, scratchDir } from './helpers'

/**
 * The race a session already running in a writable workspace wins against the next session's
 * start (swapping a planned path for a relative link while bwrap resolves it), made deterministic:
 * the host plans the mounts, then the links are planted before bwrap runs. bwrap then binds the
 * host's /proc and /tmp; the host, reading the held sandbox's mount table, must kill it before the
 * command runs.
 */

let facts: BwrapFacts
let workspace: Awaited<ReturnType<typeof scratchDir>>
const refusals: string[] = []
const gate = new StartGate(new FifoPool(() => ensureRuntimeParent()), (message) => refusals.push(message))
/** A file only the host's /tmp holds: visible inside only through a bind of the host's /tmp. */
const hostMarker = `/tmp/dsh-mount-race-${process.pid}`
/** Prints what the command could reach of the host: its /proc (this test's own pid) and its /tmp. */
const PROBE = `echo COMMAND-RAN; test -e /proc/${process.pid}/comm && echo HOST-PROC; test -e ${hostMarker} && echo HOST-TMP; true`

/** The planned mounts: the root's pinned .git, a nested repository's read-only hooks. */
function plan(userNamespace: boolean): MountPlan {
  return { ...EMPTY_MOUNT_PLAN, userNamespace, pinned: [join(workspace.path, '.git')], readOnly: [join(workspace.path, 'sub/.git/hooks')] }
}
const policy = () => ({ mode: 'workspace-write' as const, workspaceRoot: workspace.path, cwd: workspace.path })
const launch = () => ({ bwrapPath: facts.path, seccompFilter: facts.seccompFilter })

/** Plan the mounts and build the argv, held for the host's check. */
function plannedArgv(userNamespace: boolean): Promise<string[]> {
  return checkedBwrapArgv(launch(), ['sh', '-c', PROBE], policy(), plan(userNamespace), (check) => gate.hold(check))
}

/** The same start without the check: what ran before the mount check existed. */
function uncheckedArgv(userNamespace: boolean): string[] {
  return bwrapArgv(launch(), ['sh', '-c', PROBE], policy(), plan(userNamespace))
}

/** What the concurrent session does between the host's plan and bwrap: both entries become relative links out. */
function swapForLinks(): void {
  renameSync(join(workspace.path, '.git'), join(workspace.path, '.git-real'))
  symlinkSync(join(relative(workspace.path, '/'), 'proc'), join(workspace.path, '.git'))
  renameSync(join(workspace.path, 'sub/.git/hooks'), join(workspace.path, 'sub/.git/hooks-real'))
  symlinkSync(relative(join(workspace.path, 'sub/.git'), '/tmp'), join(workspace.path, 'sub/.git/hooks'))
}

describe.skipIf(bwrapUnavailable !== undefined)('the mount check against a relative-link swap, under real bubblewrap', () => {
  beforeAll(async () => {
    facts = await probeBwrap('bwrap')
    writeFileSync(hostMarker, 'host\n')
    return () => rmSync(hostMarker, { force: true })
  })

  beforeEach(async () => {
    refusals.length = 0
    workspace = await scratchDir('mount-race', '/var/tmp')
    mkdirSync(join(workspace.path, '.git/hooks'), { recursive: true })
    writeFileSync(join(workspace.path, '.git/HEAD'), 'ref: refs/heads/main\n')
    mkdirSync(join(workspace.path, 'sub/.git/hooks'), { recursive: true })
  })

  afterEach(async () => {
    await workspace?.remove()
  })

  const namespaces = () => (facts.userNamespace ? [true, false] : [false])

  it('runs the command when the workspace still holds what the host planned', async () => {
    for (const userNamespace of namespaces()) {
      const argv = await plannedArgv(userNamespace)
      expect(argv).toContain('--block-fd')
      const result = await run(argv)
      expect(result.stderr).toBe('')
      expect(result.stdout).toBe('COMMAND-RAN\n')
    }
    expect(refusals).toEqual([])
  })

  it("kills the start, after one line, when .git leads to the host's /proc and hooks to its /tmp; the command never runs", async () => {
    const planned = await Promise.all(namespaces().map((userNamespace) => plannedArgv(userNamespace)))
    const unchecked = namespaces().map((userNamespace) => uncheckedArgv(userNamespace))
    swapForLinks()
    for (const argv of planned) {
      const result = await runToFile(argv, workspace.path)
      expect(result.stdout).toBe('')
      expect(result.stderr).toMatch(/^dsh-sandbox: mount check failed: \S+ is not the mount the host planned; another session may be changing the workspace\n$/)
      expect(result.code).toBe(MOUNT_CHECK_FAILED)
    }
    expect(refusals).toHaveLength(planned.length)
    // Without the check the same start hands the command the host's /proc and /tmp: the swap is real.
    for (const argv of unchecked) expect((await run(argv)).stdout).toBe('COMMAND-RAN\nHOST-PROC\nHOST-TMP\n')
  })

  it('refuses when only the nested hooks lead to /tmp (every attach socket there)', async () => {
    const argv = await plannedArgv(false)
    renameSync(join(workspace.path, 'sub/.git/hooks'), join(workspace.path, 'sub/.git/hooks-real'))
    symlinkSync(relative(join(workspace.path, 'sub/.git'), '/tmp'), join(workspace.path, 'sub/.git/hooks'))
    const result = await runToFile(argv, workspace.path)
    expect(result.stdout).toBe('')
    expect(result.stderr).toContain(`mount check failed: ${workspace.path}/sub/.git/hooks is not the mount the host planned`)
    expect(result.code).toBe(MOUNT_CHECK_FAILED)
  })
})
