import { describe, expect, it } from 'vitest'
import { parseHierarchies } from '../src/cgroup/mounts'
import { placeLimits } from '../src/cgroup/placement'
import { FakeCgroupFiles, HYBRID, mountLine } from './fake-cgroup-files'

describe('parseHierarchies', () => {
  it('finds every cgroup mount and the host cgroup in it, skipping other filesystems', () => {
    expect(parseHierarchies(HYBRID.mountInfo, HYBRID.selfCgroup)).toEqual([
      { version: 1, controllers: ['memory'], mountPoint: '/sys/fs/cgroup/memory', ownDir: '/sys/fs/cgroup/memory/jobs/42' },
      { version: 1, controllers: ['pids'], mountPoint: '/sys/fs/cgroup/pids', ownDir: '/sys/fs/cgroup/pids' },
      { version: 1, controllers: ['cpu'], mountPoint: '/sys/fs/cgroup/cpu', ownDir: '/sys/fs/cgroup/cpu' },
      { version: 1, controllers: ['name=systemd'], mountPoint: '/sys/fs/cgroup/systemd', ownDir: '/sys/fs/cgroup/systemd' },
      { version: 2, controllers: [], mountPoint: '/sys/fs/cgroup/unified', ownDir: '/sys/fs/cgroup/unified' },
    ])
  })

  it('maps a path through a mount of a subtree, and not a path outside it', () => {
    const mounts = [mountLine('/cg', 2, [], '/docker/abc'), mountLine('/sys/fs/cgroup/pids', 1, ['pids'], '/docker/abc')].join('\n')
    expect(parseHierarchies(mounts, '0::/docker/abc/inner\n3:pids:/elsewhere')).toEqual([
      { version: 2, controllers: [], mountPoint: '/cg', ownDir: '/cg/inner' },
      { version: 1, controllers: ['pids'], mountPoint: '/sys/fs/cgroup/pids', ownDir: undefined },
    ])
  })

  it('decodes escaped mount points and refuses deleted or out-of-namespace cgroups', () => {
    expect(parseHierarchies(mountLine('/mnt/cgroup\\040two', 2), '0::/a')[0]?.ownDir).toBe('/mnt/cgroup two/a')
    expect(parseHierarchies(mountLine('/cg', 2), '0::/a (deleted)')[0]?.ownDir).toBeUndefined()
    expect(parseHierarchies(mountLine('/cg', 2), '0::/../outside')[0]?.ownDir).toBeUndefined()
  })

  it('skips malformed lines', () => {
    expect(parseHierarchies('garbage\n\n1 2 3', 'nonsense\n0::relative')).toEqual([])
  })
})

describe('placeLimits', () => {
  it("prefers v1 mounts and nests under the host cgroup there (this host's hybrid layout)", () => {
    const files = new FakeCgroupFiles({ '/sys/fs/cgroup/pids/cgroup.procs': '', '/sys/fs/cgroup/memory/jobs/42/cgroup.procs': '' })
    const placement = placeLimits(parseHierarchies(HYBRID.mountInfo, HYBRID.selfCgroup), files)
    expect(placement.hierarchies).toEqual([
      { version: 1, base: '/sys/fs/cgroup/pids', controllers: ['pids'] },
      { version: 1, base: '/sys/fs/cgroup/memory/jobs/42', controllers: ['memory'] },
    ])
    expect(placement.unavailable.size).toBe(0)
  })

  it('v2: nests beside the host cgroup when its parent enables the controllers', () => {
    const files = new FakeCgroupFiles({
      '/cg/app.slice/cgroup.subtree_control': 'cpu memory pids',
      '/cg/app.slice/host.scope/cgroup.controllers': 'cpu memory pids',
      '/cg/app.slice/host.scope/cgroup.subtree_control': '',
    })
    const placement = placeLimits(parseHierarchies(mountLine('/cg', 2), '0::/app.slice/host.scope'), files)
    expect(placement.hierarchies).toEqual([{ version: 2, base: '/cg/app.slice', controllers: ['pids', 'memory'] }])
  })

  it('v2: nests under the host cgroup when it already enables them (the root cgroup)', () => {
    const files = new FakeCgroupFiles({ '/cg/cgroup.controllers': 'memory pids', '/cg/cgroup.subtree_control': 'memory pids' })
    expect(placeLimits(parseHierarchies(mountLine('/cg', 2), '0::/'), files).hierarchies).toEqual([
      { version: 2, base: '/cg', controllers: ['pids', 'memory'] },
    ])
  })

  it('v2: says why when controllers are offered but not enabled above the host (no internal processes)', () => {
    const files = new FakeCgroupFiles({ '/cg/cgroup.subtree_control': '', '/cg/leaf/cgroup.controllers': 'memory pids', '/cg/leaf/cgroup.subtree_control': '' })
    const placement = placeLimits(parseHierarchies(mountLine('/cg', 2), '0::/leaf'), files)
    expect(placement.hierarchies).toEqual([])
    expect(placement.unavailable.get('pids')).toBe(
      "cgroup v2 offers pids to the host's cgroup /cg/leaf, but neither it nor its parent enables it in cgroup.subtree_control " +
        "(a cgroup that holds processes, like the host's, cannot enable controllers for children); " +
        'start the host in a cgroup whose parent enables pids and memory in cgroup.subtree_control and is writable by the host',
    )
  })

  it('says why when v2 offers no such controller and there is no v1 mount of it', () => {
    const files = new FakeCgroupFiles({ '/sys/fs/cgroup/unified/cgroup.controllers': '' })
    const placement = placeLimits(parseHierarchies(mountLine('/sys/fs/cgroup/unified', 2), '0::/'), files)
    expect(placement.unavailable.get('memory')).toBe(
      'no cgroup v1 memory mount, and cgroup v2 does not offer memory to the host\'s cgroup /sys/fs/cgroup/unified (cgroup.controllers: "")',
    )
  })

  it('says why when nothing is mounted, or the v1 mount does not show the host', () => {
    expect(placeLimits([], new FakeCgroupFiles()).unavailable.get('pids')).toBe('no cgroup filesystem is mounted')
    const hidden = placeLimits(parseHierarchies(mountLine('/p', 1, ['pids'], '/a'), '3:pids:/b'), new FakeCgroupFiles())
    expect(hidden.unavailable.get('pids')).toBe("the cgroup v1 pids hierarchy at /p does not show the host's own cgroup")
  })

  it('uses what exists: v1 pids here, memory missing', () => {
    const files = new FakeCgroupFiles({ '/p/cgroup.procs': '' })
    const placement = placeLimits(parseHierarchies(mountLine('/p', 1, ['pids']), '3:pids:/'), files)
    expect(placement.hierarchies).toEqual([{ version: 1, base: '/p', controllers: ['pids'] }])
    expect([...placement.unavailable.keys()]).toEqual(['memory'])
  })
})
