import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type BwrapFacts, bwrapArgv, EMPTY_MOUNT_PLAN, MOUNT_CHECK_FAILED, type MountPlan, probeBwrap } from 'dsh-sandbox-local/internal'
import { bwrapUnavailable, run, scratchDir } from './helpers'

/**
 * The race a session already running in a writable workspace wins against the next session's
 * start (swapping a planned path for a relative link while bwrap resolves it), made deterministic:
 * the host plans the mounts, then the links are planted before bwrap runs. bwrap then binds the
 * host's /proc and /tmp; the mount check inside must refuse before the command runs.
 */

let facts: BwrapFacts
let workspace: Awaited<ReturnType<typeof scratchDir>>
/** A file only the host's /tmp holds: visible inside only through a bind of the host's /tmp. */
const hostMarker = `/tmp/dsh-mount-race-${process.pid}`
/** Prints what the command could reach of the host: its /proc (this test's own pid) and its /tmp. */
const PROBE = `echo COMMAND-RAN; test -e /proc/${process.pid}/comm && echo HOST-PROC; test -e ${hostMarker} && echo HOST-TMP; true`

/** Plan the mounts (the root's pinned .git, a nested repository's read-only hooks) and build the argv. */
function plannedArgv(userNamespace: boolean): string[] {
  const plan: MountPlan = { ...EMPTY_MOUNT_PLAN, userNamespace, pinned: [join(workspace.path, '.git')], readOnly: [join(workspace.path, 'sub/.git/hooks')] }
  const launch = { bwrapPath: facts.path, seccompFilter: facts.seccompFilter }
  return bwrapArgv(launch, ['sh', '-c', PROBE], { mode: 'workspace-write', workspaceRoot: workspace.path, cwd: workspace.path }, plan)
}

/** What the concurrent session does between the host's plan and bwrap: both entries become relative links out. */
function swapForLinks(): void {
  renameSync(join(workspace.path, '.git'), join(workspace.path, '.git-real'))
  symlinkSync(join(relative(workspace.path, '/'), 'proc'), join(workspace.path, '.git'))
  renameSync(join(workspace.path, 'sub/.git/hooks'), join(workspace.path, 'sub/.git/hooks-real'))
  symlinkSync(relative(join(workspace.path, 'sub/.git'), '/tmp'), join(workspace.path, 'sub/.git/hooks'))
}

/** The same argv without the check (everything between bwrap's `--` and the command): what ran before. */
function withoutCheck(argv: readonly string[]): string[] {
  const separator = argv.indexOf('--')
  return [...argv.slice(0, separator + 1), ...argv.slice(argv.lastIndexOf('--') + 1)]
}

describe.skipIf(bwrapUnavailable !== undefined)('the mount check against a relative-link swap, under real bubblewrap', () => {
  beforeAll(async () => {
    facts = await probeBwrap('bwrap')
    writeFileSync(hostMarker, 'host\n')
    return () => rmSync(hostMarker, { force: true })
  })

  beforeEach(async () => {
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
      const result = await run(plannedArgv(userNamespace))
      expect(result.stderr).toBe('')
      expect(result.stdout).toBe('COMMAND-RAN\n')
    }
  })

  it("refuses with exit 125 and one line when .git leads to the host's /proc and hooks to its /tmp; the command never runs", async () => {
    const planned = namespaces().map((userNamespace) => plannedArgv(userNamespace))
    swapForLinks()
    for (const argv of planned) {
      const result = await run(argv)
      expect(result.stdout).toBe('')
      expect(result.stderr).toMatch(/^dsh-sandbox: mount check failed: \S+ is not the mount the host planned; another session may be changing the workspace\n$/)
      expect(result.code).toBe(MOUNT_CHECK_FAILED)
      // Without the check the same start hands the command the host's /proc and /tmp: the swap is real.
      const unchecked = await run(withoutCheck(argv))
      expect(unchecked.stdout).toBe('COMMAND-RAN\nHOST-PROC\nHOST-TMP\n')
    }
  })

  it('refuses when only the nested hooks lead to /tmp (every attach socket there)', async () => {
    const argv = plannedArgv(false)
    renameSync(join(workspace.path, 'sub/.git/hooks'), join(workspace.path, 'sub/.git/hooks-real'))
    symlinkSync(relative(join(workspace.path, 'sub/.git'), '/tmp'), join(workspace.path, 'sub/.git/hooks'))
    const result = await run(argv)
    expect(result.stdout).toBe('')
    expect(result.stderr).toContain(`mount check failed: ${workspace.path}/sub/.git/hooks is not the mount the host planned`)
    expect(result.code).toBe(MOUNT_CHECK_FAILED)
  })
})
