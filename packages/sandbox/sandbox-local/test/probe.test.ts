import { Context } from '@deepseek-ai/cordis'
import { chmod, mkdir, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { SandboxError } from 'dsh-sandbox'
import * as localPlugin from 'dsh-sandbox-local'
import { Config, type HostFacts, LocalSandbox } from 'dsh-sandbox-local'
import { assertConfined, DEFAULT_HOME_FILES, explainBwrapFailure, probeBwrap, readLegacyTiocsti, resolveExecutable } from 'dsh-sandbox-local/internal'
import { bwrapUnavailable, scratchDir } from './helpers'

let dir: { path: string; remove: () => Promise<void> }

beforeEach(async () => {
  dir = await scratchDir('probe')
})

afterEach(async () => {
  await dir.remove()
})

async function failure(promise: Promise<unknown>): Promise<{ code?: string; message: string }> {
  return promise.then(
    () => ({ message: 'resolved' }),
    (error: unknown) => ({ code: error instanceof SandboxError ? error.code : undefined, message: String(error) }),
  )
}

/** A provider whose host facts are scripted, counting how often the host was probed. */
function scripted(facts: () => Promise<HostFacts>) {
  const probes = { count: 0 }
  class ScriptedSandbox extends LocalSandbox {
    protected override probeHost(): Promise<HostFacts> {
      probes.count++
      return facts()
    }
  }
  return { ScriptedSandbox, probes }
}

/** Host facts as a scripted probe reports them, with the given TIOCSTI fact. */
function hostFacts(legacyTiocsti: HostFacts['legacyTiocsti']): HostFacts {
  const seccompFilter = join(dir.path, 'filters', 'seccomp-scripted.bpf')
  return { bwrapPath: '/usr/bin/bwrap', userNamespace: true, seccompFilter, legacyTiocsti, installationRoots: [] }
}

/** A full report of a confining trial, with some fields replaced. */
function report(changes: Record<string, string | undefined> = {}): string {
  const fields: Record<string, string | undefined> = {
    capabilities: '0000000000000000',
    'seccomp-mode': '2',
    'seccomp-filters': '1',
    remount: 'refused',
    'sysctl-write': 'refused',
    keyctl: 'refused',
    'user-namespace': 'refused',
    ...changes,
  }
  return Object.entries(fields)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key}=${value}\n`)
    .join('')
}

/**
 * A bwrap stand-in that runs the real bwrap with its argv rewritten by a sed-free shell loop:
 * `drop` removes options (with their one value), `miss` replaces paths by a missing one, which
 * `--ro-bind-try` then skips. It weakens one confinement so the probe must notice.
 */
async function weakenedBwrap(name: string, change: { drop?: string[]; miss?: string[] }): Promise<string> {
  const path = join(dir.path, name)
  const drop = (change.drop ?? []).map((option) => `"$arg" = ${option}`).join(' -o ') || 'x = y'
  const miss = (change.miss ?? []).map((target) => `"$arg" = ${target}`).join(' -o ') || 'x = y'
  const real = await resolveExecutable('bwrap')
  await writeFile(
    path,
    [
      '#!/bin/sh',
      'skip=0; first=1',
      'for arg do',
      '  if [ $first = 1 ]; then set --; first=0; fi',
      '  if [ $skip = 1 ]; then skip=0; continue; fi',
      `  if [ ${drop} ]; then [ "$arg" = --seccomp ] && skip=1; continue; fi`,
      `  if [ ${miss} ]; then arg=/dsh-missing-path; fi`,
      '  set -- "$@" "$arg"',
      'done',
      `exec ${real} "$@"`,
      '',
    ].join('\n'),
  )
  await chmod(path, 0o755)
  return path
}

const enabled = { enabled: true, detail: 'dev.tty.legacy_tiocsti=1' }
const disabled = { enabled: false, detail: 'dev.tty.legacy_tiocsti=0' }

describe('probe: missing or refused bubblewrap fails closed and names the fix', () => {
  it('a bwrap that is not on PATH', async () => {
    const result = await failure(probeBwrap('dsh-no-such-bwrap'))
    expect(result.code).toBe('SANDBOX_UNAVAILABLE')
    expect(result.message).toMatch(/not found.*on PATH/)
    expect(result.message).toContain('apt-get install bubblewrap')
  })

  it('a bwrapPath that does not exist', async () => {
    const result = await failure(probeBwrap(join(dir.path, 'bwrap')))
    expect(result.code).toBe('SANDBOX_UNAVAILABLE')
    expect(result.message).toContain(`at ${join(dir.path, 'bwrap')}`)
    expect(result.message).toContain('apt-get install bubblewrap')
  })

  it('a host that refuses user namespaces', async () => {
    const fake = join(dir.path, 'bwrap')
    const said = 'bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.'
    await writeFile(fake, `#!/bin/sh\necho "${said}" >&2\nexit 1\n`)
    await chmod(fake, 0o755)
    const result = await failure(probeBwrap(fake))
    expect(result.code).toBe('SANDBOX_UNAVAILABLE')
    expect(result.message).toContain(said)
    expect(result.message).toContain('sysctl -w kernel.unprivileged_userns_clone=1')
  })

  it('a bwrap that starts the command without confining it fails the proof (as root it keeps every capability)', async () => {
    // A stand-in that ignores its options and runs what follows `--`, the way a broken wrapper would.
    const fake = join(dir.path, 'bwrap')
    await writeFile(fake, '#!/bin/sh\nwhile [ "$1" != -- ]; do shift; done\nshift\nexec "$@"\n')
    await chmod(fake, 0o755)
    const result = await failure(probeBwrap(fake))
    expect(result.code).toBe('SANDBOX_UNAVAILABLE')
    expect(result.message).toContain('does not confine')
    if (process.getuid?.() === 0) expect(result.message).toMatch(/kept capabilities \(CapEff 0*[1-9a-f]/)
  })

  it('the proof needs an empty capability set and a refused remount', () => {
    expect(() => assertConfined('/b', report())).not.toThrow()
    expect(() => assertConfined('/b', report({ remount: 'untried' }))).not.toThrow()
    const kept = () => assertConfined('/b', report({ capabilities: '000001fffeffffff' }))
    expect(kept).toThrow(/kept capabilities \(CapEff 000001fffeffffff\)/)
    expect(() => assertConfined('/b', report({ remount: 'allowed' }))).toThrow(/could remount/)
    expect(() => assertConfined('/b', report({ capabilities: undefined }))).toThrow(/did not report its capabilities/)
    expect(() => assertConfined('/b', report({ remount: undefined }))).toThrow(/did not report the remount/)
    expect(() => assertConfined('/b', '')).toThrow(SandboxError)
  })

  it('the proof needs the /proc/sys write, keyctl and a new user namespace refused, naming each failed check', () => {
    expect(() => assertConfined('/b', report({ 'sysctl-write': 'allowed' }))).toThrow(/could write \/proc\/sys\/vm\/overcommit_ratio/)
    expect(() => assertConfined('/b', report({ 'sysctl-write': 'unreadable' }))).toThrow(/could not read \/proc\/sys/)
    expect(() => assertConfined('/b', report({ 'sysctl-write': undefined }))).toThrow(/did not report the \/proc\/sys write/)
    expect(() => assertConfined('/b', report({ keyctl: 'allowed' }))).toThrow(/keyctl reached the kernel keyrings/)
    expect(() => assertConfined('/b', report({ keyctl: 'failed-38' }))).toThrow(/keyctl failed with errno 38 instead of the filter's EPERM/)
    expect(() => assertConfined('/b', report({ keyctl: undefined }))).toThrow(/did not report the keyctl attempt/)
    expect(() => assertConfined('/b', report({ 'user-namespace': 'allowed' }))).toThrow(/could create a user namespace/)
    expect(() => assertConfined('/b', report({ 'user-namespace': undefined }))).toThrow(/did not report the user namespace/)
    // Every failed check is named, not only the first.
    const all = () => assertConfined('/b', report({ 'sysctl-write': 'allowed', keyctl: 'allowed', 'user-namespace': 'allowed' }))
    expect(all).toThrow(/overcommit_ratio.*; keyctl reached.*; it could create a user namespace/)
  })

  it('the seccomp filter must be loaded on top of the host filters; without perl and python3 that is the proof', () => {
    expect(() => assertConfined('/b', report({ 'seccomp-filters': '2' }), 1)).not.toThrow()
    expect(() => assertConfined('/b', report({ 'seccomp-filters': '1' }), 1)).toThrow(
      /seccomp filter is not loaded \(Seccomp_filters 1 inside, 1 in the host process\)/,
    )
    expect(() => assertConfined('/b', report({ 'seccomp-filters': '0' }))).toThrow(/seccomp filter is not loaded/)
    // Old kernels print no Seccomp_filters: keyctl's EPERM proves the filter alone.
    expect(() => assertConfined('/b', report({ 'seccomp-filters': undefined }))).not.toThrow()
    expect(() => assertConfined('/b', report({ keyctl: 'untried' }))).not.toThrow()
    expect(() => assertConfined('/b', report({ keyctl: 'untried', 'seccomp-mode': '0', 'seccomp-filters': '0' }))).toThrow(/neither perl nor python3/)
    expect(() => assertConfined('/b', report({ keyctl: 'untried', 'seccomp-filters': undefined }))).toThrow(/neither perl nor python3/)
    // unshare missing: the filter, proven loaded, refuses new user namespaces anyway.
    expect(() => assertConfined('/b', report({ 'user-namespace': 'untried' }))).not.toThrow()
  })

  it('an architecture without syscall tables refuses to confine', async () => {
    const result = await failure(probeBwrap('bwrap', { architecture: 'ia32' }))
    expect(result.code).toBe('SANDBOX_UNAVAILABLE')
    expect(result.message).toMatch(/x64 and arm64 only, and this host is ia32/)
  })

  it('a filter directory that is not private to this uid refuses to confine', async () => {
    const open = join(dir.path, 'open')
    await mkdir(open, { mode: 0o755 })
    await chmod(open, 0o755)
    const shared = await failure(probeBwrap('bwrap', { filterDirectory: open }))
    expect(shared.code).toBe('SANDBOX_UNAVAILABLE')
    expect(shared.message).toMatch(/is not private to uid \d+ \(owner \d+, mode 755\)/)
    const link = join(dir.path, 'link')
    await symlink(dir.path, link)
    const linked = await failure(probeBwrap('bwrap', { filterDirectory: link }))
    expect(linked.message).toMatch(/is not a directory/)
  })

  describe.skipIf(bwrapUnavailable !== undefined)('a bubblewrap that loses one confinement fails the proof, with the real bwrap behind it', () => {
    it('without the seccomp filter: keyctl reaches the keyrings', async () => {
      const result = await failure(probeBwrap(await weakenedBwrap('no-seccomp', { drop: ['--seccomp'] })))
      expect(result.code).toBe('SANDBOX_UNAVAILABLE')
      expect(result.message).toContain('keyctl reached the kernel keyrings')
      expect(result.message).toContain('seccomp filter is not loaded')
      expect(result.message).not.toContain('overcommit_ratio')
    })

    it('without the seccomp filter and --disable-userns: a user namespace can be created too', async () => {
      const result = await failure(probeBwrap(await weakenedBwrap('no-userns-limit', { drop: ['--seccomp', '--disable-userns'] })))
      expect(result.message).toContain('keyctl reached the kernel keyrings')
      expect(result.message).toContain('could create a user namespace (unshare -U)')
    })

    it.skipIf(process.getuid?.() !== 0)('with /proc/sys left writable: root writes the sysctl (back, unchanged)', async () => {
      const result = await failure(probeBwrap(await weakenedBwrap('writable-sysctl', { miss: ['/proc/sys'] })))
      expect(result.code).toBe('SANDBOX_UNAVAILABLE')
      expect(result.message).toContain('could write /proc/sys/vm/overcommit_ratio')
      expect(result.message).not.toContain('keyctl')
    })
  })

  it.skipIf(bwrapUnavailable !== undefined)('the real bwrap passes the proof, in a user namespace here', async () => {
    const facts = await probeBwrap('bwrap', { filterDirectory: join(dir.path, 'filters') })
    expect(facts.path).toMatch(/\/bwrap$/)
    expect(facts.userNamespace).toBe(true)
    expect(facts.seccompFilter).toMatch(new RegExp(`^${dir.path}/filters/seccomp-[0-9a-f]{32}\\.bpf$`))
  })

  it('a host that is not Linux', async () => {
    const result = await failure(probeBwrap('bwrap', { platform: 'darwin' }))
    expect(result.code).toBe('SANDBOX_UNAVAILABLE')
    expect(result.message).toMatch(/needs Linux; this host is darwin/)
  })

  it('explains the usual bwrap diagnostics', () => {
    expect(explainBwrapFailure('bwrap: setting up uid map: Permission denied')).toMatch(/user namespaces/)
    expect(explainBwrapFailure('bwrap: Creating new namespace failed: No space left on device')).toMatch(/max_user_namespaces/)
    expect(explainBwrapFailure("bwrap: Can't mount proc on /newroot/proc: Operation not permitted")).toMatch(/container/)
    expect(explainBwrapFailure('bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted')).toMatch(/container/)
    expect(explainBwrapFailure('something else')).toMatch(/by hand/)
  })

  it('resolves executables like execvp', async () => {
    const tool = join(dir.path, 'tool')
    await writeFile(tool, '#!/bin/sh\n')
    await chmod(tool, 0o755)
    await writeFile(join(dir.path, 'data'), '')
    expect(await resolveExecutable('tool', `/nonexistent:${dir.path}`)).toBe(tool)
    expect(await resolveExecutable(tool, '')).toBe(tool)
    expect(await resolveExecutable('data', dir.path)).toBeUndefined()
    expect(await resolveExecutable('tool', '')).toBeUndefined()
  })
})

describe('legacy TIOCSTI check', () => {
  it('reads dev.tty.legacy_tiocsti and fails safe', async () => {
    const knob = join(dir.path, 'legacy_tiocsti')
    await writeFile(knob, '0\n')
    expect(await readLegacyTiocsti(knob)).toEqual({ enabled: false, detail: 'dev.tty.legacy_tiocsti=0' })
    await writeFile(knob, '1\n')
    expect((await readLegacyTiocsti(knob)).enabled).toBe(true)
    await writeFile(knob, 'weird\n')
    expect((await readLegacyTiocsti(knob)).enabled).toBe(true)
    const absent = await readLegacyTiocsti(join(dir.path, 'absent'))
    expect(absent.enabled).toBe(true)
    expect(absent.detail).toMatch(/predates/)
  })

  it('reports what this host allows', async () => {
    const fact = await readLegacyTiocsti()
    console.info(`this host: TIOCSTI ${fact.enabled ? 'allowed' : 'disabled'} (${fact.detail})`)
    expect(typeof fact.enabled).toBe('boolean')
  })

  it('"refuse" fails closed when TIOCSTI is allowed', async () => {
    const { ScriptedSandbox } = scripted(async () => hostFacts(enabled))
    const root = new Context()
    await root.plugin(ScriptedSandbox, Config.parse({ legacyTiocsti: 'refuse' }))
    const result = await failure(root.sandbox.confine(['sh'], { mode: 'read-only', workspaceRoot: dir.path }))
    expect(result.code).toBe('SANDBOX_UNAVAILABLE')
    expect(result.message).toContain('sysctl -w dev.tty.legacy_tiocsti=0')
  })

  it('"refuse" confines when TIOCSTI is disabled', async () => {
    const { ScriptedSandbox } = scripted(async () => hostFacts(disabled))
    const root = new Context()
    await root.plugin(ScriptedSandbox, Config.parse({ legacyTiocsti: 'refuse' }))
    const argv = await root.sandbox.confine(['sh'], { mode: 'read-only', workspaceRoot: dir.path })
    expect(argv.slice(0, 1)).toEqual(['/bin/sh'])
    expect(argv[argv.indexOf('--seccomp') - 1]).toBe('/usr/bin/bwrap')
  })

  it('"warn" (the default) confines and logs the risk once', async () => {
    const { ScriptedSandbox } = scripted(async () => hostFacts(enabled))
    const root = new Context()
    const warnings: string[] = []
    root.logger.exporter({
      colors: 0,
      levels: { default: 3 },
      export: (message) => message.type === 'warn' && warnings.push(String(message.args[1] ?? message.args[0])),
    })
    await root.plugin(ScriptedSandbox, Config.parse({}))
    await root.sandbox.confine(['sh'], { mode: 'read-only', workspaceRoot: dir.path })
    await root.sandbox.confine(['sh'], { mode: 'workspace-write', workspaceRoot: dir.path })
    expect(warnings).toHaveLength(1)
    // One short line naming the fix.
    expect(warnings[0]).toContain('TIOCSTI')
    expect(warnings[0]).toContain('sysctl -w dev.tty.legacy_tiocsti=0')
    expect(warnings[0]).not.toContain('\n')
    expect(warnings[0]!.length).toBeLessThanOrEqual(160)
  })
})

describe('provider lifecycle', () => {
  it('probes once and remembers a failure: every confine fails closed', async () => {
    const { ScriptedSandbox, probes } = scripted(async () => {
      throw new SandboxError('SANDBOX_UNAVAILABLE', 'install bubblewrap: apt-get install bubblewrap')
    })
    const root = new Context()
    await root.plugin(ScriptedSandbox, Config.parse({}))
    const policy = { mode: 'workspace-write', workspaceRoot: dir.path } as const
    for (let attempt = 0; attempt < 3; attempt++) {
      expect((await failure(root.sandbox.confine(['bash'], policy))).code).toBe('SANDBOX_UNAVAILABLE')
    }
    expect(probes.count).toBe(1)
  })

  it('validates the request before probing the host', async () => {
    const { ScriptedSandbox, probes } = scripted(async () => hostFacts(disabled))
    const root = new Context()
    await root.plugin(ScriptedSandbox, Config.parse({}))
    const ws = { mode: 'workspace-write', workspaceRoot: dir.path } as const
    expect((await failure(root.sandbox.confine([], ws))).code).toBe('EMPTY_ARGV')
    const full = { mode: 'danger-full-access', workspaceRoot: dir.path } as never
    expect((await failure(root.sandbox.confine(['sh'], full))).code).toBe('INVALID_POLICY')
    const missing = { mode: 'read-only', workspaceRoot: join(dir.path, 'missing') } as const
    expect((await failure(root.sandbox.confine(['sh'], missing))).message).toMatch(/does not exist/)
    await writeFile(join(dir.path, 'file'), '')
    const file = { mode: 'read-only', workspaceRoot: join(dir.path, 'file') } as const
    expect((await failure(root.sandbox.confine(['sh'], file))).message).toMatch(/not a directory/)
    const everything = { mode: 'workspace-write', workspaceRoot: '/' } as const
    expect((await failure(root.sandbox.confine(['sh'], everything))).message).toMatch(/whole filesystem writable/)
    expect(probes.count).toBe(0)
  })

  it('is the one ctx.sandbox: a second provider fails to load, a reload succeeds', async () => {
    const root = new Context()
    const first = await root.plugin(localPlugin, {})
    const second = await Promise.resolve(root.plugin(localPlugin, {})).then(
      () => 'loaded',
      (error: unknown) => String(error),
    )
    expect(second).toMatch(/service "sandbox" has been registered/)
    await first.dispose()
    expect(root.get('sandbox')).toBeUndefined()
    await root.plugin(localPlugin, {})
    expect(root.get('sandbox') instanceof LocalSandbox).toBe(true)
  })

  it('validates its config', async () => {
    const root = new Context()
    const error = await Promise.resolve(root.plugin(localPlugin, { legacyTiocsti: 'ignore' } as never)).then(
      () => 'loaded',
      (caught: unknown) => String(caught),
    )
    expect(error).toMatch(/invalid config/)
    expect(Config.parse({})).toEqual({
      bwrapPath: 'bwrap',
      legacyTiocsti: 'warn',
      protectGitMetadata: true,
      protectHostInstallation: true,
      protectedPaths: [],
      privateHome: true,
      homeFiles: [...DEFAULT_HOME_FILES],
      readablePaths: [],
      egressAddresses: {},
    })
    expect(() => Config.parse({ protectedPaths: [''] })).toThrow(/must not be empty/)
    expect(() => Config.parse({ egressAddresses: { 'git.internal': 'not-an-address' } })).toThrow(/IPv4 or IPv6 address/)
  })
})
