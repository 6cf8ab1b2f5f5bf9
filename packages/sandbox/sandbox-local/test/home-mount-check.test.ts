import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ensureRuntimeParent, type SandboxPolicy } from 'dsh-sandbox'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type BwrapFacts,
  bwrapArgv,
  bwrapOptions,
  EMPTY_MOUNT_PLAN,
  FifoPool,
  MOUNT_CHECK_FAILED,
  type MountCheck,
  mountCheckFailure,
  type MountPlan,
  parseMountinfo,
  planMountCheck,
  probeBwrap,
  readHostMounts,
  StartGate,
} from 'dsh-sandbox-local/internal'
import { bwrapUnavailable, run, runToFile, scratchDir } from './helpers'

/**
 * The mount check covers the private home and the credential masks wherever they lie: a start
 * whose table lacks one (a plan whose mask or home bind was dropped between check and argv) is
 * killed before its command runs, and the refusal names what is missing with a stable code.
 */

const HOST_TABLE = parseMountinfo(
  ['27 1 254:0 / / rw,relatime - ext4 /dev/vda rw', '22 27 0:21 / /proc rw - proc proc rw', '24 27 0:6 / /dev rw - devtmpfs devtmpfs rw'].join('\n'),
)
const HOME_PLAN: MountPlan = {
  ...EMPTY_MOUNT_PLAN,
  home: { path: '/home/u', source: '/home/u/.local/state/dsh-terminal/homes/w-1', files: [{ source: '/home/u/.vimrc', destination: '/home/u/.vimrc' }] },
  masks: [
    { path: '/etc/shadow', directory: false },
    { path: '/root', directory: true },
  ],
}
const POLICY: SandboxPolicy = { mode: 'workspace-write', workspaceRoot: '/var/tmp/w' }

describe('planMountCheck with a private home and credential masks', () => {
  it('expects the home bind, each dotfile and each mask, with what each is for', () => {
    const check = planMountCheck(bwrapOptions(POLICY, HOME_PLAN), POLICY, HOME_PLAN, () => HOST_TABLE)
    expect(check.expected.filter((mount) => mount.purpose !== undefined)).toEqual([
      { destination: '/home/u', root: '/home/u/.local/state/dsh-terminal/homes/w-1', device: '254:0', readOnly: false, purpose: 'private-home' },
      { destination: '/home/u/.vimrc', root: '/home/u/.vimrc', device: '254:0', readOnly: true, purpose: 'private-home' },
      { destination: '/etc/shadow', root: '/null', device: '0:6', readOnly: true, purpose: 'credential-mask' },
      { destination: '/root', root: '/', readOnly: false, purpose: 'credential-mask' },
    ])
  })

  it('orders the mounts so that what must show through a mask comes after it, and a mask inside the workspace after that', () => {
    const policy: SandboxPolicy = { mode: 'workspace-write', workspaceRoot: '/root/w' }
    const plan: MountPlan = {
      ...EMPTY_MOUNT_PLAN,
      home: { path: '/root/home', source: '/state/h', files: [{ source: '/root/home/.config', destination: '/root/home/.config' }] },
      masks: [
        { path: '/root', directory: true },
        { path: '/root/home/.config/gh', directory: true },
        { path: '/root/w/.ssh', directory: true },
      ],
      opened: [{ source: '/root/w/.ssh/known_hosts', destination: '/root/w/.ssh/known_hosts' }],
    }
    const order = bwrapOptions(policy, plan).filter((option) => option.startsWith('/root') || option === '/state/h')
    expect(order).toEqual([
      '/root',
      '/state/h',
      '/root/home',
      '/root/home/.config',
      '/root/home/.config',
      '/root/home/.config/gh',
      '/root/w',
      '/root/w',
      '/root/w/.ssh',
      '/root/w/.ssh/known_hosts',
      '/root/w/.ssh/known_hosts',
    ])
  })

  it('names a missing mask or home with its code', () => {
    const check: MountCheck = {
      zones: [],
      allowed: [],
      expected: [
        { destination: '/home/u', root: '/state/w-1', device: '254:0', readOnly: false, purpose: 'private-home' },
        { destination: '/etc/shadow', root: '/null', device: '0:6', readOnly: true, purpose: 'credential-mask' },
      ],
    }
    const home = '40 1 254:0 /state/w-1 /home/u rw - ext4 /dev/vda rw'
    const mask = '41 1 0:6 /null /etc/shadow ro - devtmpfs devtmpfs rw'
    const table = (lines: string[]) => parseMountinfo(['1 0 254:0 / / ro - ext4 /dev/vda rw', ...lines].join('\n'))
    expect(mountCheckFailure(check, table([home, mask]))).toBeUndefined()
    expect(mountCheckFailure(check, table([mask]))).toBe('/home/u is not the private home mount the host planned (PRIVATE_HOME_MISSING)')
    expect(mountCheckFailure(check, table([home]))).toBe('/etc/shadow is not the credential mask the host planned (CREDENTIAL_MASK_MISSING)')
    // The real home bound there instead of the private one is refused too.
    expect(mountCheckFailure(check, table(['40 1 254:0 /home/u /home/u rw - ext4 /dev/vda rw', mask]))).toMatch(/PRIVATE_HOME_MISSING/)
  })
})

describe.skipIf(bwrapUnavailable !== undefined)('a dropped mask or home bind fails the start, under real bubblewrap', () => {
  let facts: BwrapFacts
  let scratch: Awaited<ReturnType<typeof scratchDir>>
  const refusals: string[] = []
  const gate = new StartGate(new FifoPool(() => ensureRuntimeParent()), (message) => refusals.push(message))
  let plan: MountPlan
  let policy: SandboxPolicy
  const PROBE = 'echo COMMAND-RAN'

  beforeAll(async () => {
    facts = await probeBwrap('bwrap')
    scratch = await scratchDir('home-check', '/var/tmp')
    const home = join(scratch.path, 'home')
    const state = join(scratch.path, 'state')
    mkdirSync(join(home, '.ssh'), { recursive: true })
    mkdirSync(state)
    writeFileSync(join(home, '.ssh/id_rsa'), 'SECRET\n')
    const workspace = join(scratch.path, 'ws')
    mkdirSync(workspace)
    policy = { mode: 'workspace-write', workspaceRoot: workspace, cwd: workspace }
    plan = { ...EMPTY_MOUNT_PLAN, home: { path: home, source: state, files: [] }, masks: [{ path: join(home, '.ssh'), directory: true }] }
  })

  afterAll(() => scratch?.remove())

  /** Hold a start checked against `plan` but spawned with `spawned`'s mounts. */
  async function start(spawned: MountPlan) {
    const launch = { bwrapPath: facts.path, seccompFilter: facts.seccompFilter }
    const held = await gate.hold(planMountCheck(bwrapOptions(policy, plan), policy, plan, readHostMounts))
    return bwrapArgv(launch, ['sh', '-c', PROBE], policy, spawned, held)
  }

  it('runs the command when every planned mount is there', async () => {
    expect((await run(await start(plan))).stdout).toBe('COMMAND-RAN\n')
  })

  it('kills the start when the mask is dropped (CREDENTIAL_MASK_MISSING)', async () => {
    const result = await runToFile(await start({ ...plan, masks: [] }), scratch.path)
    expect(result.stdout).toBe('')
    expect(result.stderr).toContain(`mount check failed: ${plan.home!.path}/.ssh is not the credential mask the host planned (CREDENTIAL_MASK_MISSING)`)
    expect(result.code).toBe(MOUNT_CHECK_FAILED)
  })

  it('kills the start when the home bind is dropped (PRIVATE_HOME_MISSING)', async () => {
    const { home: _dropped, ...withoutHome } = plan
    const result = await runToFile(await start(withoutHome), scratch.path)
    expect(result.stdout).toBe('')
    expect(result.stderr).toContain(`mount check failed: ${plan.home!.path} is not the private home mount the host planned (PRIVATE_HOME_MISSING)`)
    expect(result.code).toBe(MOUNT_CHECK_FAILED)
    expect(refusals.some((reason) => reason.includes('PRIVATE_HOME_MISSING'))).toBe(true)
  })
})
