import { describe, expect, it } from 'vitest'
import { bwrapArgv, bwrapOptions, EMPTY_MOUNT_PLAN, kernelMaskOptions } from 'dsh-sandbox-local/internal'

describe('bwrap options', () => {
  it('read-only: read-only root, private /tmp, no network, read-only workspace', () => {
    const options = bwrapOptions({ mode: 'read-only', workspaceRoot: '/work/project' })
    expect(options).toEqual([
      '--die-with-parent',
      '--unshare-pid',
      '--cap-drop',
      'ALL',
      '--ro-bind',
      '/',
      '/',
      '--dev',
      '/dev',
      '--proc',
      '/proc',
      ...kernelMaskOptions(),
      '--tmpfs',
      '/tmp',
      '--unshare-net',
      '--ro-bind',
      '/work/project',
      '/work/project',
    ])
  })

  it('workspace-write: the workspace is bound read-write and the network is shared', () => {
    const options = bwrapOptions({ mode: 'workspace-write', workspaceRoot: '/work/project', cwd: '/work/project/src' })
    expect(options).not.toContain('--unshare-net')
    expect(options.slice(-5)).toEqual(['--bind', '/work/project', '/work/project', '--chdir', '/work/project/src'])
  })

  it('drops every capability always; a user namespace only when the plan has one', () => {
    const plain = bwrapOptions({ mode: 'workspace-write', workspaceRoot: '/w' })
    expect(plain.slice(plain.indexOf('--cap-drop'), plain.indexOf('--cap-drop') + 2)).toEqual(['--cap-drop', 'ALL'])
    expect(plain).not.toContain('--unshare-user')
    expect(plain).not.toContain('--disable-userns')
    const userNamespace = bwrapOptions({ mode: 'workspace-write', workspaceRoot: '/w' }, { ...EMPTY_MOUNT_PLAN, userNamespace: true })
    expect(userNamespace.indexOf('--unshare-user')).toBeLessThan(userNamespace.indexOf('--unshare-pid'))
    // bwrap accepts --disable-userns only with --unshare-user; without one the seccomp filter alone refuses new ones.
    expect(userNamespace.slice(userNamespace.indexOf('--unshare-user'), userNamespace.indexOf('--unshare-user') + 2)).toEqual([
      '--unshare-user',
      '--disable-userns',
    ])
  })

  it('network: the mode decides by default, the policy can cut egress in workspace-write or share it in read-only', () => {
    expect(bwrapOptions({ mode: 'workspace-write', workspaceRoot: '/w', network: 'none' })).toContain('--unshare-net')
    expect(bwrapOptions({ mode: 'read-only', workspaceRoot: '/w', network: 'host' })).not.toContain('--unshare-net')
    expect(bwrapOptions({ mode: 'read-only', workspaceRoot: '/w' })).toContain('--unshare-net')
  })

  it('protected paths come after the workspace, parents first, then hidden sockets; a pin inside a read-only path stays read-only', () => {
    const plan = {
      userNamespace: false,
      readOnly: ['/w/.git/config', '/w/tools', '/w/.git/hooks'],
      pinned: ['/w/.git', '/w/tools/.git'],
      hidden: ['/run/docker.sock'],
      privateDirs: [],
    }
    const options = bwrapOptions({ mode: 'workspace-write', workspaceRoot: '/w' }, plan)
    const after = options.slice(options.indexOf('/w') + 2)
    expect(after).toEqual([
      '--ro-bind',
      '/w/tools',
      '/w/tools',
      '--bind',
      '/w/.git',
      '/w/.git',
      '--ro-bind',
      '/w/.git/config',
      '/w/.git/config',
      '--ro-bind',
      '/w/.git/hooks',
      '/w/.git/hooks',
      // Control sockets last: a workspace that holds one must not show it again.
      '--ro-bind',
      '/dev/null',
      '/run/docker.sock',
    ])
    // Under read-only the whole workspace is read-only already: no protections needed, sockets still hidden.
    const readOnly = bwrapOptions({ mode: 'read-only', workspaceRoot: '/w' }, plan)
    expect(readOnly).not.toContain('/w/.git')
    expect(readOnly).toContain('/run/docker.sock')
  })

  it('keeps the controlling terminal: never starts a new session', () => {
    for (const mode of ['read-only', 'workspace-write'] as const) {
      expect(bwrapOptions({ mode, workspaceRoot: '/w' })).not.toContain('--new-session')
    }
  })

  it('binds the workspace after the private /tmp so a workspace under /tmp stays visible', () => {
    const options = bwrapOptions({ mode: 'workspace-write', workspaceRoot: '/tmp/ws' })
    expect(options.indexOf('--bind')).toBeGreaterThan(options.indexOf('--tmpfs'))
  })

  it('binds readable files read-only after the private /tmp, before hidden sockets and the workspace', () => {
    const plan = { userNamespace: false, readOnly: [], pinned: [], hidden: ['/tmp/app/control.sock'], privateDirs: [] }
    const options = bwrapOptions({ mode: 'workspace-write', workspaceRoot: '/tmp/ws', readableFiles: ['/tmp/app/startup.py'] }, plan)
    const file = options.indexOf('/tmp/app/startup.py')
    expect(options.slice(file - 1, file + 2)).toEqual(['--ro-bind', '/tmp/app/startup.py', '/tmp/app/startup.py'])
    expect(file).toBeGreaterThan(options.indexOf('--tmpfs'))
    expect(file).toBeLessThan(options.indexOf('/tmp/app/control.sock'))
    expect(file).toBeLessThan(options.indexOf('/tmp/ws'))
  })

  it('covers a private runtime directory before the workspace, or after it (only) when it lies inside the workspace', () => {
    const plan = { userNamespace: false, readOnly: [], pinned: [], hidden: [], privateDirs: ['/run/user/0', '/w/tmp'] }
    const options = bwrapOptions({ mode: 'workspace-write', workspaceRoot: '/w' }, plan)
    const workspace = options.indexOf('/w')
    const tmpfs = (path: string) => options.flatMap((option, index) => (option === '--tmpfs' && options[index + 1] === path ? [index] : []))
    expect(tmpfs('/run/user/0')).toEqual([expect.any(Number)])
    expect(tmpfs('/run/user/0')[0]).toBeLessThan(workspace)
    // Inside the workspace the bind would show the host's directory again: it is covered after the bind.
    expect(tmpfs('/w/tmp')).toHaveLength(1)
    expect(tmpfs('/w/tmp')[0]).toBeGreaterThan(workspace)
    // A workspace inside a private directory stays visible: nothing covers it after its bind.
    const inside = bwrapOptions({ mode: 'workspace-write', workspaceRoot: '/run/user/0/ws' }, { ...plan, privateDirs: ['/run/user/0'] })
    expect(inside.lastIndexOf('--tmpfs')).toBeLessThan(inside.indexOf('/run/user/0/ws'))
  })

  it('passes the command after `--` untouched, behind the shell that opens the seccomp filter as descriptor 3', () => {
    const launch = { bwrapPath: '/usr/bin/bwrap', seccompFilter: '/run/dsh-sandbox/seccomp-0123.bpf' }
    const argv = bwrapArgv(launch, ['--not-an-option', 'a b', ''], { mode: 'read-only', workspaceRoot: '/w' })
    expect(argv.slice(0, 8)).toEqual(['/bin/sh', '-c', 'exec 3<"$1" && shift && exec "$@"', 'sh', launch.seccompFilter, '/usr/bin/bwrap', '--seccomp', '3'])
    expect(argv.slice(argv.indexOf('--'))).toEqual(['--', '--not-an-option', 'a b', ''])
  })

  it('a read-only workspace of / is not bound again over the sandbox /proc, /dev and /tmp', () => {
    const options = bwrapOptions({ mode: 'read-only', workspaceRoot: '/' })
    expect(options.filter((option) => option === '/')).toHaveLength(2)
    expect(options.slice(options.indexOf('--ro-bind'), options.indexOf('--ro-bind') + 3)).toEqual(['--ro-bind', '/', '/'])
  })

  it('covers each private directory once under a read-only workspace of / (nothing binds over it later)', () => {
    const plan = { ...EMPTY_MOUNT_PLAN, privateDirs: ['/run/user/0', '/var/tmp/private'] }
    const options = bwrapOptions({ mode: 'read-only', workspaceRoot: '/' }, plan)
    for (const path of plan.privateDirs) expect(options.filter((option) => option === path)).toHaveLength(1)
  })
})
