import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { diagnoseSandbox, type SandboxCheck } from '../src/index'

// `doctor`'s diagnosis: the real bubblewrap and trial sandbox of this machine, and sysctls written
// into a directory of the test's own where a machine's settings are what is under test.
const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** A sysctl tree holding `values` (path under /proc/sys → content). */
function sysctls(values: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'dsh-doctor-'))
  dirs.push(root)
  for (const [path, value] of Object.entries(values)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), `${value}\n`)
  }
  return root
}

const check = (checks: readonly SandboxCheck[], name: string) => checks.find((found) => found.name === name)

describe('diagnoseSandbox', () => {
  it('proves this machine confines: bubblewrap with its version, the trial sandbox in force', async () => {
    const diagnosis = await diagnoseSandbox('bwrap')
    expect(diagnosis.confines).toBe(true)
    expect(check(diagnosis.checks, 'bubblewrap')).toMatchObject({ state: 'ok', detail: expect.stringMatching(/bwrap \(bubblewrap \d+\.\d+/) })
    expect(check(diagnosis.checks, 'trial sandbox')).toMatchObject({ state: 'ok', detail: expect.stringContaining('seccomp filter in force') })
    expect(check(diagnosis.checks, 'seccomp')?.state).toBe('ok')
  })

  it('names the missing bubblewrap and its install command, and does not confine', async () => {
    const diagnosis = await diagnoseSandbox('/nonexistent/bwrap')
    expect(diagnosis.confines).toBe(false)
    expect(check(diagnosis.checks, 'bubblewrap')).toMatchObject({ state: 'missing', fix: expect.stringContaining('apt-get install bubblewrap') })
    expect(check(diagnosis.checks, 'trial sandbox')).toMatchObject({ state: 'missing', detail: expect.stringContaining('bubblewrap not found') })
  })

  it('names each sysctl that refuses user namespaces to a user, with the command that allows it', async () => {
    const refusing = sysctls({ 'user/max_user_namespaces': '0', 'kernel/unprivileged_userns_clone': '0', 'kernel/apparmor_restrict_unprivileged_userns': '1' })
    const asUser = await diagnoseSandbox('bwrap', { sysctlRoot: refusing, uid: 1000 })
    const namespaces = check(asUser.checks, 'user namespaces')
    expect(namespaces?.state).toBe('missing')
    expect(namespaces?.fix).toContain('sysctl -w user.max_user_namespaces=')
    expect(namespaces?.fix).toContain('sysctl -w kernel.unprivileged_userns_clone=1')
    expect(namespaces?.fix).toContain('sysctl -w kernel.apparmor_restrict_unprivileged_userns=0')
    // Root starts bubblewrap without a user namespace: the same settings are only information.
    const asRoot = await diagnoseSandbox('bwrap', { sysctlRoot: refusing, uid: 0 })
    expect(check(asRoot.checks, 'user namespaces')).toMatchObject({ state: 'info', detail: expect.stringContaining('not needed') })
  })

  it('warns while TIOCSTI is allowed, and is fine once it is off', async () => {
    const allowed = await diagnoseSandbox('bwrap', { sysctlRoot: sysctls({ 'dev/tty/legacy_tiocsti': '1' }) })
    expect(check(allowed.checks, 'TIOCSTI')).toMatchObject({ state: 'warn', fix: 'sysctl -w dev.tty.legacy_tiocsti=0' })
    const off = await diagnoseSandbox('bwrap', { sysctlRoot: sysctls({ 'dev/tty/legacy_tiocsti': '0' }) })
    expect(check(off.checks, 'TIOCSTI')?.state).toBe('ok')
  })

  it('says a platform other than Linux cannot be confined, and what runs there instead', async () => {
    const diagnosis = await diagnoseSandbox('bwrap', { platform: 'darwin' })
    expect(diagnosis).toEqual({
      confines: false,
      checks: [{ name: 'platform', state: 'missing', detail: expect.stringContaining('darwin'), fix: expect.stringContaining('--preset danger-full-access') }],
    })
  })
})
