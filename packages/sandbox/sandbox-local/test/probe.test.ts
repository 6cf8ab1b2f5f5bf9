import { Context } from '@deepseek-ai/cordis'
import { chmod, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { SandboxError } from 'dsh-sandbox'
import * as localPlugin from 'dsh-sandbox-local'
import { assertConfined, Config, explainBwrapFailure, type HostFacts, LocalSandbox, probeBwrap, readLegacyTiocsti, resolveExecutable } from 'dsh-sandbox-local'
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
  return { bwrapPath: '/usr/bin/bwrap', userNamespace: true, legacyTiocsti, installationRoots: [] }
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
    expect(() => assertConfined('/b', 'capabilities=0000000000000000\nremount=refused\n')).not.toThrow()
    expect(() => assertConfined('/b', 'capabilities=0000000000000000\nremount=untried\n')).not.toThrow()
    const kept = () => assertConfined('/b', 'capabilities=000001fffeffffff\nremount=refused\n')
    expect(kept).toThrow(/kept capabilities \(CapEff 000001fffeffffff\)/)
    expect(() => assertConfined('/b', 'capabilities=0000000000000000\nremount=allowed\n')).toThrow(/could remount/)
    expect(() => assertConfined('/b', 'remount=refused\n')).toThrow(/did not report its capabilities/)
    expect(() => assertConfined('/b', 'capabilities=0\n')).toThrow(/did not report the remount/)
    expect(() => assertConfined('/b', '')).toThrow(SandboxError)
  })

  it.skipIf(bwrapUnavailable !== undefined)('the real bwrap passes the proof, in a user namespace here', async () => {
    const facts = await probeBwrap('bwrap')
    expect(facts.path).toMatch(/\/bwrap$/)
    expect(facts.userNamespace).toBe(true)
  })

  it('a host that is not Linux', async () => {
    const result = await failure(probeBwrap('bwrap', 'darwin'))
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
    expect(argv.slice(0, 1)).toEqual(['/usr/bin/bwrap'])
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
    expect(warnings[0]).toContain('TIOCSTI')
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
    })
    expect(() => Config.parse({ protectedPaths: [''] })).toThrow(/must not be empty/)
  })
})
