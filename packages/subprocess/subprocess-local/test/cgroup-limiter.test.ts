import { describe, expect, it } from 'vitest'
import { CgroupLimiter, type CgroupLimiterOptions } from '../src/internal'
import { FakeCgroupFiles, mountLine } from './fake-cgroup-files'

const HOST_PID = 4321

/** A v2 host whose parent cgroup delegates pids and memory (a systemd user session, for example). */
function delegatedV2(): FakeCgroupFiles {
  return new FakeCgroupFiles({
    '/bin/sh': '',
    '/cg/app.slice/cgroup.subtree_control': 'memory pids',
    '/cg/app.slice/host.scope/cgroup.controllers': 'memory pids',
  })
}

function limiter(files: FakeCgroupFiles, options: Partial<CgroupLimiterOptions> = {}) {
  const warnings: string[] = []
  const subject = new CgroupLimiter(
    {
      mountInfo: () => mountLine('/cg', 2),
      selfCgroup: () => '0::/app.slice/host.scope',
      files,
      hostPid: HOST_PID,
      platform: 'linux',
      isAlive: () => true,
      ...options,
    },
    (message) => warnings.push(message),
  )
  return { subject, warnings }
}

describe('CgroupLimiter', () => {
  it('creates a parent with the controllers enabled and a session with its limits (v2)', () => {
    const files = delegatedV2()
    const { subject, warnings } = limiter(files)
    const { cgroup, applied } = subject.open({ maxProcesses: 64, maxMemoryBytes: 1 << 30 })
    expect(applied).toEqual({ maxProcesses: 64, maxMemoryBytes: 1 << 30 })
    const [session] = cgroup!.dirs
    expect(session).toMatch(new RegExp(`^/cg/app\\.slice/dsh-terminal-${HOST_PID}-\\d+/session-1$`))
    const parent = session!.slice(0, session!.lastIndexOf('/'))
    expect(files.read(`${parent}/cgroup.subtree_control`)).toBe('+pids +memory')
    expect(files.read(`${session}/pids.max`)).toBe('64')
    expect(files.read(`${session}/memory.max`)).toBe(String(1 << 30))
    expect(cgroup!.launcher('/usr/bin/bash', ['-i']).args.slice(2)).toEqual([
      'dsh-cgroup-join',
      '-',
      '-',
      `${session}/cgroup.procs`,
      '--',
      '/usr/bin/bash',
      '-i',
    ])
    expect(warnings).toEqual([])
    // A terminal removes its own session directory; dispose removes whatever is left, parent last.
    subject.dispose()
    expect(files.exists(session!)).toBe(false)
    expect(files.exists(parent)).toBe(false)
  })

  it('writes v1 file names and only the controllers asked for', () => {
    const files = new FakeCgroupFiles({ '/bin/sh': '', '/p/cgroup.procs': '', '/m/cgroup.procs': '' })
    const { subject } = limiter(files, {
      mountInfo: () => [mountLine('/p', 1, ['pids']), mountLine('/m', 1, ['memory'])].join('\n'),
      selfCgroup: () => '3:pids:/\n4:memory:/',
    })
    const memoryOnly = subject.open({ maxMemoryBytes: 4096 })
    expect(memoryOnly.cgroup!.dirs).toHaveLength(1)
    expect(files.read(`${memoryOnly.cgroup!.dirs[0]}/memory.limit_in_bytes`)).toBe('4096')
    const both = subject.open({ maxProcesses: 10, maxMemoryBytes: 4096 })
    expect(both.cgroup!.dirs.map((dir) => dir.split('/')[1])).toEqual(['p', 'm'])
    expect(files.read(`${both.cgroup!.dirs[0]}/pids.max`)).toBe('10')
  })

  it('asks nothing of the host when no limit is requested', () => {
    const files = delegatedV2()
    const { subject, warnings } = limiter(files)
    expect(subject.open(undefined)).toEqual({ cgroup: undefined, applied: {} })
    expect(subject.open({ maxProcesses: undefined })).toEqual({ cgroup: undefined, applied: {} })
    expect(files.subdirectories('/cg/app.slice')).toEqual(['host.scope'])
    expect(warnings).toEqual([])
  })

  it('starts sessions without caps where cgroups are unusable, and says so once', () => {
    const { subject, warnings } = limiter(new FakeCgroupFiles({ '/bin/sh': '' }), { mountInfo: () => '', selfCgroup: () => '' })
    for (let round = 0; round < 3; round++) {
      expect(subject.open({ maxProcesses: 64 })).toEqual({ cgroup: undefined, applied: { notApplied: 'no cgroup filesystem is mounted' } })
    }
    expect(warnings).toEqual(['per-session limits are not enforced: no cgroup filesystem is mounted; sessions start without them'])
  })

  it('applies what it can and names what it cannot', () => {
    const files = new FakeCgroupFiles({ '/bin/sh': '', '/p/cgroup.procs': '' })
    const { subject, warnings } = limiter(files, { mountInfo: () => mountLine('/p', 1, ['pids']), selfCgroup: () => '3:pids:/' })
    const { applied } = subject.open({ maxProcesses: 64, maxMemoryBytes: 4096 })
    expect(applied).toEqual({ maxProcesses: 64, notApplied: 'no cgroup filesystem is mounted' })
    subject.open({ maxProcesses: 64, maxMemoryBytes: 4096 })
    expect(warnings).toHaveLength(1)
  })

  it('degrades, cleaning up, when a session cgroup cannot be created', () => {
    const files = delegatedV2()
    files.failures.push({ operation: 'write', path: '/memory.max', code: 'EACCES' })
    const { subject, warnings } = limiter(files)
    const first = subject.open({ maxProcesses: 64, maxMemoryBytes: 4096 })
    subject.open({ maxProcesses: 64, maxMemoryBytes: 4096 })
    expect(first).toEqual({ cgroup: undefined, applied: { notApplied: 'could not create a session cgroup under /cg/app.slice: EACCES' } })
    expect(warnings).toHaveLength(1)
    const [parent] = files.subdirectories('/cg/app.slice').filter((name) => name.startsWith('dsh-terminal-'))
    expect(files.subdirectories(`/cg/app.slice/${parent}`)).toEqual([])
  })

  it('removes a session directory once, and reports one it may not remove', async () => {
    const files = delegatedV2()
    const { subject, warnings } = limiter(files)
    const first = subject.open({ maxProcesses: 8 }).cgroup!
    await first.remove(2000)
    await first.remove(2000)
    expect(files.exists(first.dirs[0]!)).toBe(false)
    const second = subject.open({ maxProcesses: 8 }).cgroup!
    files.failures.push({ operation: 'rmdir', path: second.dirs[0]!, code: 'EACCES' })
    await second.remove(60_000)
    expect(warnings).toEqual([`could not remove session cgroup ${second.dirs[0]}: EACCES; the next start sweeps it`])
  })

  it('says so when cgroups cannot exist: another platform, unreadable /proc, no launcher shell', () => {
    expect(limiter(delegatedV2(), { platform: 'darwin' }).subject.open({ maxProcesses: 1 }).applied).toEqual({
      notApplied: 'cgroups exist only on Linux, not on darwin',
    })
    expect(limiter(delegatedV2(), { mountInfo: () => undefined }).subject.open({ maxProcesses: 1 }).applied.notApplied).toBe(
      'cannot read /proc/self/mountinfo and /proc/self/cgroup',
    )
    const noShell = new FakeCgroupFiles({ '/cg/app.slice/cgroup.subtree_control': 'pids', '/cg/app.slice/host.scope/cgroup.controllers': 'pids' })
    expect(limiter(noShell).subject.open({ maxProcesses: 1 }).applied.notApplied).toBe('/bin/sh, which joins a session to its cgroups, does not exist')
  })

  it('sweeps the parents of dead hosts at start, keeping live ones and foreign directories', () => {
    const files = delegatedV2()
    for (const dir of ['dsh-terminal-111-1/session-4', 'dsh-terminal-222-3', `dsh-terminal-${HOST_PID}-9`, 'dsh-terminal-x-1', 'other'])
      files.mkdir(`/cg/app.slice/${dir.split('/')[0]}`)
    files.mkdir('/cg/app.slice/dsh-terminal-111-1/session-4')
    limiter(files, { isAlive: (pid) => pid === 222 })
    expect(files.subdirectories('/cg/app.slice').sort()).toEqual([
      'dsh-terminal-222-3',
      `dsh-terminal-${HOST_PID}-9`,
      'dsh-terminal-x-1',
      'host.scope',
      'other',
    ])
  })
})
