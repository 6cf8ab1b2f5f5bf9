import { describe, expect, it } from 'vitest'
import { bwrapArgv, bwrapOptions } from 'dsh-sandbox-local'

describe('bwrap options', () => {
  it('read-only: read-only root, private /tmp, no network, read-only workspace', () => {
    const options = bwrapOptions({ mode: 'read-only', workspaceRoot: '/work/project' })
    expect(options).toEqual([
      '--die-with-parent',
      '--unshare-pid',
      '--ro-bind', '/', '/',
      '--dev', '/dev',
      '--proc', '/proc',
      '--tmpfs', '/tmp',
      '--unshare-net',
      '--ro-bind', '/work/project', '/work/project',
    ])
  })

  it('workspace-write: the workspace is bound read-write and the network is shared', () => {
    const options = bwrapOptions({ mode: 'workspace-write', workspaceRoot: '/work/project', cwd: '/work/project/src' })
    expect(options).not.toContain('--unshare-net')
    expect(options.slice(-5)).toEqual(['--bind', '/work/project', '/work/project', '--chdir', '/work/project/src'])
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

  it('passes the command after `--` untouched', () => {
    const argv = bwrapArgv('/usr/bin/bwrap', ['--not-an-option', 'a b', ''], { mode: 'read-only', workspaceRoot: '/w' })
    expect(argv[0]).toBe('/usr/bin/bwrap')
    expect(argv.slice(argv.indexOf('--'))).toEqual(['--', '--not-an-option', 'a b', ''])
  })
})
