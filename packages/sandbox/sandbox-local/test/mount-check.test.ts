import { describe, expect, it } from 'vitest'
import {
  bwrapOptions,
  EMPTY_MOUNT_PLAN,
  emittedMounts,
  type MountCheck,
  mountCheckFailure,
  mountCheckMessage,
  type MountPlan,
  parseMountinfo,
  planMountCheck,
} from 'dsh-sandbox-local/internal'

const WORKSPACE = '/var/tmp/w s'
const HOST_TABLE = parseMountinfo(
  [
    '27 1 254:0 / / rw,relatime - ext4 /dev/vda rw',
    '22 27 0:21 / /proc rw,relatime - proc proc rw',
    '23 22 0:60 / /proc/sys/fs/binfmt_misc rw,relatime - binfmt_misc binfmt_misc rw',
    '24 27 0:6 / /dev rw,relatime - devtmpfs devtmpfs rw',
  ].join('\n'),
)
const PLAN: MountPlan = { ...EMPTY_MOUNT_PLAN, pinned: [`${WORKSPACE}/.git`], readOnly: [`${WORKSPACE}/.git/hooks`] }

describe('planMountCheck: what the sandbox must verify', () => {
  const plan = (policy: Parameters<typeof bwrapOptions>[0], mountPlan: MountPlan = PLAN) => {
    let reads = 0
    const check = planMountCheck(bwrapOptions(policy, mountPlan), policy, mountPlan, () => (reads++, HOST_TABLE))
    return { check, reads }
  }

  it('a check for every start: the workspace bind (read-only ones too, and with no mount inside) and the guarded zones', () => {
    const workspaceBind = (readOnly: boolean) => ({ destination: WORKSPACE, root: WORKSPACE, device: '254:0', readOnly })
    const readOnly = plan({ mode: 'read-only', workspaceRoot: WORKSPACE })
    expect(readOnly.check.expected).toEqual([workspaceBind(true)])
    expect(readOnly.check.zones).toEqual(['/tmp', '/proc'])
    expect(plan({ mode: 'workspace-write', workspaceRoot: WORKSPACE }, EMPTY_MOUNT_PLAN).check.expected).toEqual([workspaceBind(false)])
    // A readable file outside the workspace cannot be raced by a session inside it.
    expect(plan({ mode: 'workspace-write', workspaceRoot: WORKSPACE, readableFiles: ['/etc/hostname'] }, EMPTY_MOUNT_PLAN).check.expected).toEqual([
      workspaceBind(false),
    ])
    // A read-only workspace of / is the `--ro-bind / /` itself: nothing of it is bound again, the zones are still guarded.
    const whole = plan({ mode: 'read-only', workspaceRoot: '/' }, EMPTY_MOUNT_PLAN).check
    expect(whole).toMatchObject({ zones: ['/tmp', '/proc'], expected: [] })
  })

  it('every mount from or onto the writable workspace, with the identity the host table gives it, the workspace bind too', () => {
    const { check, reads } = plan(
      { mode: 'workspace-write', workspaceRoot: WORKSPACE, readableFiles: [`${WORKSPACE}/notes`] },
      {
        ...PLAN,
        hidden: [`${WORKSPACE}/run/docker.sock`],
        privateDirs: [`${WORKSPACE}/tmp`],
      },
    )
    expect(reads).toBe(1)
    expect(check?.expected).toEqual([
      { destination: `${WORKSPACE}/notes`, root: `${WORKSPACE}/notes`, device: '254:0', readOnly: true },
      { destination: WORKSPACE, root: WORKSPACE, device: '254:0', readOnly: false },
      { destination: `${WORKSPACE}/.git`, root: `${WORKSPACE}/.git`, device: '254:0', readOnly: false },
      { destination: `${WORKSPACE}/.git/hooks`, root: `${WORKSPACE}/.git/hooks`, device: '254:0', readOnly: true },
      { destination: `${WORKSPACE}/tmp`, root: '/', readOnly: false },
      { destination: `${WORKSPACE}/run/docker.sock`, root: '/null', device: '0:6', readOnly: true },
    ])
  })

  it("guards /tmp and /proc: allowed there are exactly bwrap's own mounts and the host's that `--ro-bind / /` copies", () => {
    const { check } = plan({ mode: 'workspace-write', workspaceRoot: WORKSPACE })
    expect(check?.zones).toEqual(['/tmp', '/proc'])
    const emitted = emittedMounts(bwrapOptions({ mode: 'workspace-write', workspaceRoot: WORKSPACE }, PLAN)).map((mount) => mount.destination)
    expect(check?.allowed).toEqual(expect.arrayContaining(['/tmp', '/proc', '/proc/sys', '/proc/sys/fs/binfmt_misc']))
    expect(check?.allowed.filter((path) => !emitted.includes(path))).toEqual(
      ['/proc/sysrq-trigger', '/proc/irq', '/proc/bus', '/proc/sys/fs/binfmt_misc'].filter((path) => !emitted.includes(path)),
    )
    // A host runtime parent outside /tmp (a symlinked /tmp) is guarded too.
    const moved = plan({ mode: 'workspace-write', workspaceRoot: WORKSPACE }, { ...PLAN, hostRuntimeParent: '/private/tmp/dsh-terminal' })
    expect(moved.check?.zones).toEqual(['/tmp', '/proc', '/private/tmp/dsh-terminal'])
  })

  it('refuses an option it does not know, so a new kind of mount cannot slip past the check', () => {
    expect(() => emittedMounts(['--bind-fd', '3', '/x'])).toThrow(/unknown bwrap option --bind-fd/)
    expect(() => emittedMounts(['constructor'])).toThrow(/unknown bwrap option/)
  })
})

/** A sandbox's mount table as bwrap 0.8 leaves it (copied from a real one, trimmed). */
const SANDBOX_LINES = [
  '68 45 254:0 / / ro,nosuid,nodev,relatime - ext4 /dev/vda rw',
  '70 68 0:21 / /proc ro,nosuid,nodev,relatime - proc proc rw',
  '83 68 0:6 / /dev ro,nosuid,nodev,relatime - devtmpfs devtmpfs rw',
  '88 83 0:41 / /dev rw,nosuid,nodev,relatime - tmpfs tmpfs rw,mode=755',
  '89 88 0:6 /null /dev/null rw,nosuid,relatime - devtmpfs devtmpfs rw',
  '96 70 0:43 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw',
  '97 96 0:43 /irq /proc/irq ro,nosuid,nodev,noexec,relatime - proc proc rw',
  '99 96 0:21 /sys /proc/sys ro,nosuid,nodev,relatime - proc proc rw',
  '103 96 0:6 /null /proc/keys ro,nosuid,nodev,relatime - devtmpfs devtmpfs rw',
  '107 68 0:46 / /tmp rw,nosuid,nodev,relatime - tmpfs tmpfs rw,mode=755',
  '109 68 254:0 /var/tmp/w\\040s /var/tmp/w\\040s rw,nosuid,nodev,relatime - ext4 /dev/vda rw',
  '111 109 254:0 /var/tmp/w\\040s/.git /var/tmp/w\\040s/.git rw,nosuid,nodev,relatime - ext4 /dev/vda rw',
  '112 111 254:0 /var/tmp/w\\040s/.git/hooks /var/tmp/w\\040s/.git/hooks ro,nosuid,nodev,relatime - ext4 /dev/vda rw',
]
const CHECK: MountCheck = {
  zones: ['/tmp', '/proc'],
  allowed: ['/tmp', '/proc', '/proc/irq', '/proc/sys', '/proc/keys'],
  expected: [
    { destination: WORKSPACE, root: WORKSPACE, device: '254:0', readOnly: false },
    { destination: `${WORKSPACE}/.git`, root: `${WORKSPACE}/.git`, device: '254:0', readOnly: false },
    { destination: `${WORKSPACE}/.git/hooks`, root: `${WORKSPACE}/.git/hooks`, device: '254:0', readOnly: true },
  ],
}

describe("mountCheckFailure: the host's verdict on a held sandbox's mount table", () => {
  const table = (lines: readonly string[]) => parseMountinfo(lines.join('\n'))
  const check = (lines: readonly string[], expectation: MountCheck = CHECK) => mountCheckFailure(expectation, table(lines))
  const replaced = (index: number, line: string) => SANDBOX_LINES.map((original, at) => (at === index ? line : original))

  it('passes when every mount is the planned one', () => {
    expect(check(SANDBOX_LINES)).toBeUndefined()
  })

  it("refuses when the pinned .git shows the host's /proc (its source was swapped for a link)", () => {
    expect(check(replaced(11, '111 109 0:21 / /var/tmp/w\\040s/.git rw,nosuid,nodev,relatime - proc proc rw'))).toBe(
      '/var/tmp/w\\040s/.git is not the mount the host planned',
    )
  })

  it('refuses when the bind landed on /proc instead (its destination was swapped for a link), though /proc itself is an allowed point', () => {
    const lines = [...SANDBOX_LINES.slice(0, 11), '111 96 0:21 / /proc rw,nosuid,nodev,relatime - proc proc rw', SANDBOX_LINES[12]!]
    expect(check(lines)).toMatch(/w\\040s\/\.git is not the mount the host planned/)
  })

  it('refuses another filesystem at the right path, and a writable mount where a read-only one was planned', () => {
    expect(check(replaced(11, '111 109 254:1 /var/tmp/w\\040s/.git /var/tmp/w\\040s/.git rw - ext4 /dev/vdb rw'))).toMatch(/\.git is not the mount/)
    expect(check(replaced(12, '112 111 254:0 /var/tmp/w\\040s/.git/hooks /var/tmp/w\\040s/.git/hooks rw,nosuid - ext4 /dev/vda rw'))).toMatch(
      /hooks is not the mount/,
    )
  })

  it('takes the last mount at a point: refuses a planned mount covered by a later one; one underneath, or the same twice, is harmless', () => {
    expect(check([...SANDBOX_LINES, '113 112 0:21 / /var/tmp/w\\040s/.git/hooks ro - proc proc rw'])).toMatch(/hooks is not the mount the host planned/)
    const underneath = [...SANDBOX_LINES.slice(0, 12), '120 111 0:21 / /var/tmp/w\\040s/.git/hooks rw - proc proc rw', SANDBOX_LINES[12]!]
    expect(check(underneath)).toBeUndefined()
    // A workspace that is a mount point on the host: `--ro-bind / /` copies it, then the workspace bind repeats it.
    const twice = [...SANDBOX_LINES.slice(0, 10), '108 68 254:0 /var/tmp/w\\040s /var/tmp/w\\040s ro - ext4 /dev/vda rw', ...SANDBOX_LINES.slice(10)]
    expect(check(twice)).toBeUndefined()
  })

  it('checks a fresh tmpfs by its root alone, as the last mount at its point', () => {
    const cover: MountCheck = { ...CHECK, expected: [{ destination: `${WORKSPACE}/tmp`, root: '/', readOnly: false }] }
    const tmpfs = '140 109 0:80 / /var/tmp/w\\040s/tmp rw - tmpfs tmpfs rw'
    expect(check([...SANDBOX_LINES, tmpfs], cover)).toBeUndefined()
    expect(check(SANDBOX_LINES, cover)).toMatch(/w\\040s\/tmp is not the mount/)
    expect(check([...SANDBOX_LINES, tmpfs, '141 140 254:0 /var/tmp/w\\040s/x /var/tmp/w\\040s/tmp rw - ext4 /dev/vda rw'], cover)).toMatch(
      /tmp is not the mount/,
    )
  })

  it('refuses any mount in /tmp or /proc that bwrap was not asked for (the host /tmp with every attach socket)', () => {
    expect(check([...SANDBOX_LINES, '130 107 254:0 /tmp/dsh-terminal /tmp/dsh-terminal rw - ext4 /dev/vda rw'])).toBe(
      '/tmp/dsh-terminal is a mount the sandbox was not given',
    )
    expect(check([...SANDBOX_LINES, '131 96 0:21 / /proc/1 rw - proc proc rw'])).toBe('/proc/1 is a mount the sandbox was not given')
    // A mount point merely starting with a guarded name is elsewhere.
    expect(check([...SANDBOX_LINES, '132 68 0:70 / /tmpdata rw - tmpfs tmpfs rw'])).toBeUndefined()
  })

  it('does not take a longer mount point for the planned one', () => {
    expect(check(replaced(11, '111 109 254:0 /var/tmp/w\\040s/.git /var/tmp/w\\040s/.gitx rw - ext4 /dev/vda rw'))).toMatch(/\.git is not the mount/)
  })

  it('refuses an empty table (nothing planned is there) and keeps a reason with a newline in a path on one line', () => {
    expect(check([])).toMatch(/is not the mount the host planned$/)
    const odd: MountCheck = { ...CHECK, expected: [{ destination: '/w/a\nb', root: '/w/a\nb', device: '254:0', readOnly: false }] }
    expect(mountCheckFailure(odd, [])).toBe('/w/a\\012b is not the mount the host planned')
  })

  it("words the line the sandbox's terminal gets", () => {
    expect(mountCheckMessage('/w/.git is not the mount the host planned')).toBe(
      'dsh-sandbox: mount check failed: /w/.git is not the mount the host planned; another session may be changing the workspace',
    )
  })
})
