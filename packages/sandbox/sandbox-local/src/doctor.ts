import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { errorMessage } from 'dsh-basics'
import { type ProbeHost, probeBwrap, resolveExecutable } from './probe'
import { seccompArchitecture } from './seccomp/program'
import { readLegacyTiocsti } from './tiocsti'

/** How one fact of the host bears on confinement: fine, missing (the sandbox cannot start), a risk, or only informative. */
export type CheckState = 'ok' | 'missing' | 'warn' | 'info'

/** One line of a diagnosis: what was looked at, what it showed, and the command that fixes it when it is not fine. */
export interface SandboxCheck {
  readonly name: string
  readonly state: CheckState
  readonly detail: string
  readonly fix?: string
}

/** What this host confines and how: every check, and whether a trial sandbox proved confinement. */
export interface SandboxDiagnosis {
  /** A trial sandbox with every option sessions get started and proved it confines (see `probeBwrap`). */
  readonly confines: boolean
  readonly checks: readonly SandboxCheck[]
}

/** Where the diagnosis reads the host; the defaults are this machine's. Tests point them elsewhere. */
export interface DiagnosisHost extends ProbeHost {
  /** Root of the sysctl files (`/proc/sys`). */
  readonly sysctlRoot?: string
  /** AppArmor's module parameters (`/sys/module/apparmor/parameters`). */
  readonly apparmorRoot?: string
  /** The effective uid (root needs no user namespace to start bubblewrap). */
  readonly uid?: number
}

const INSTALL_FIX = 'apt-get install bubblewrap (Debian/Ubuntu), dnf install bubblewrap (Fedora); or run unsandboxed with --preset danger-full-access'

/**
 * Look at everything the sandbox depends on, one check each, then start the same trial sandbox the
 * provider starts before its first session. The trial decides `confines`; the other checks say why
 * it failed and what to run. Never throws: a check that cannot be made says so.
 */
export async function diagnoseSandbox(bwrapPath = 'bwrap', host: DiagnosisHost = {}): Promise<SandboxDiagnosis> {
  const platform = host.platform ?? process.platform
  if (platform !== 'linux') {
    const check: SandboxCheck = {
      name: 'platform',
      state: 'missing',
      detail: `bubblewrap sandboxing needs Linux; this host is ${platform}`,
      fix: 'run sessions unsandboxed with --preset danger-full-access',
    }
    return { confines: false, checks: [check] }
  }
  const checks: SandboxCheck[] = [await bubblewrapCheck(bwrapPath)]
  checks.push(...(await namespaceChecks(host)))
  checks.push(seccompCheck(host.architecture))
  checks.push(await tiocstiCheck(host.sysctlRoot))
  let confines = false
  try {
    const facts = await probeBwrap(bwrapPath, host)
    confines = true
    const how = facts.userNamespace ? 'in a user namespace of its own' : 'without a user namespace (started by root)'
    checks.push({ name: 'trial sandbox', state: 'ok', detail: `confines ${how}: no capability, / read-only, the seccomp filter in force` })
  } catch (error) {
    checks.push({ name: 'trial sandbox', state: 'missing', detail: errorMessage(error) })
  }
  return { confines, checks }
}

async function bubblewrapCheck(bwrapPath: string): Promise<SandboxCheck> {
  const executable = await resolveExecutable(bwrapPath)
  if (executable === undefined) return { name: 'bubblewrap', state: 'missing', detail: `no executable "${bwrapPath}" found`, fix: INSTALL_FIX }
  const version = await commandOutput(executable, ['--version'])
  return { name: 'bubblewrap', state: 'ok', detail: version ? `${executable} (${version})` : executable }
}

/** The sysctls that let (or stop) an unprivileged process create the user namespace bwrap starts in. */
async function namespaceChecks(host: DiagnosisHost): Promise<SandboxCheck[]> {
  const sysctl = (path: string) => readTrimmed(join(host.sysctlRoot ?? '/proc/sys', path))
  const root = (host.uid ?? process.getuid?.() ?? -1) === 0
  const maxNamespaces = await sysctl('user/max_user_namespaces')
  const cloneAllowed = await sysctl('kernel/unprivileged_userns_clone')
  const apparmorRestricts = await sysctl('kernel/apparmor_restrict_unprivileged_userns')
  const blocked: string[] = []
  const fixes: string[] = []
  if (maxNamespaces === '0') {
    blocked.push('user.max_user_namespaces=0')
    fixes.push('sysctl -w user.max_user_namespaces=15000')
  }
  if (cloneAllowed === '0') {
    blocked.push('kernel.unprivileged_userns_clone=0')
    fixes.push('sysctl -w kernel.unprivileged_userns_clone=1')
  }
  if (apparmorRestricts === '1') {
    blocked.push('kernel.apparmor_restrict_unprivileged_userns=1')
    fixes.push('sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 (or an AppArmor profile that lets bwrap create user namespaces)')
  }
  const namespaces: SandboxCheck =
    blocked.length === 0
      ? { name: 'user namespaces', state: 'ok', detail: `allowed (user.max_user_namespaces=${maxNamespaces ?? 'unknown'})` }
      : root
        ? { name: 'user namespaces', state: 'info', detail: `refused to unprivileged users (${blocked.join(', ')}); not needed: this host runs as root` }
        : { name: 'user namespaces', state: 'missing', detail: `refused (${blocked.join(', ')})`, fix: fixes.join('; ') }
  const enabled = await readTrimmed(join(host.apparmorRoot ?? '/sys/module/apparmor/parameters', 'enabled'))
  const apparmor: SandboxCheck = {
    name: 'AppArmor',
    state: 'info',
    detail: enabled === 'Y' ? `enabled${apparmorRestricts === '1' ? ', restricting unprivileged user namespaces' : ''}` : 'not enabled',
  }
  return [namespaces, apparmor]
}

function seccompCheck(architecture: string | undefined): SandboxCheck {
  try {
    return { name: 'seccomp', state: 'ok', detail: `syscall filter for ${seccompArchitecture(architecture)}` }
  } catch (error) {
    return {
      name: 'seccomp',
      state: 'missing',
      detail: errorMessage(error),
      fix: 'run the host on x86_64 or aarch64, or unsandboxed with --preset danger-full-access',
    }
  }
}

async function tiocstiCheck(sysctlRoot: string | undefined): Promise<SandboxCheck> {
  const fact = await readLegacyTiocsti(join(sysctlRoot ?? '/proc/sys', 'dev/tty/legacy_tiocsti'))
  return fact.enabled
    ? {
        name: 'TIOCSTI',
        state: 'warn',
        detail: `${fact.detail}: refused inside every sandbox by its seccomp filter, allowed outside`,
        fix: 'sysctl -w dev.tty.legacy_tiocsti=0',
      }
    : { name: 'TIOCSTI', state: 'ok', detail: `${fact.detail}: no process can push input into its terminal` }
}

async function readTrimmed(path: string): Promise<string | undefined> {
  try {
    return (await readFile(path, 'utf8')).trim()
  } catch {
    return undefined
  }
}

/** The first line `file args` prints, or undefined when it fails (bounded at 5 s). */
function commandOutput(file: string, args: readonly string[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: 5000, encoding: 'utf8' }, (error, stdout) => resolve(error ? undefined : stdout.trim().split('\n')[0]))
  })
}
