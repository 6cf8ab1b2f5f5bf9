import { spawn } from 'node:child_process'
import { constants } from 'node:fs'
import { access, readFile, stat } from 'node:fs/promises'
import { delimiter, join, resolve } from 'node:path'
import { SandboxError } from 'dsh-sandbox'
import { EMPTY_MOUNT_PLAN } from './args'
import { bwrapArgv } from './launch'
import { filterDirectory, installSeccompFilter } from './seccomp/filter-file'
import { seccompArchitecture } from './seccomp/program'
import { type SeccompArchitecture, SYSCALL_NUMBERS } from './seccomp/syscalls'

/** Bound on the one-off trial sandbox; bwrap normally answers in a few milliseconds. */
const PROBE_TIMEOUT_MS = 10_000
/** Bound on the output kept from the trial, enough for bwrap's diagnostics and the proof's report. */
const OUTPUT_LIMIT = 4096

const INSTALL_FIX = 'install bubblewrap: apt-get install bubblewrap (Debian/Ubuntu) or dnf install bubblewrap (Fedora)'
const USERNS_FIX =
  'enable unprivileged user namespaces: sysctl -w kernel.unprivileged_userns_clone=1 (Debian) and user.max_user_namespaces > 0; ' +
  'on Ubuntu 23.10+ also allow them for bwrap: sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for bwrap'
const CONTAINER_FIX = 'run on a host, or in a container allowed to mount and unshare namespaces (a seccomp/AppArmor profile that permits them, or --privileged)'

/**
 * Find an executable the way execvp would: a name containing `/` is a path (relative to the
 * process cwd), anything else is searched on PATH. Returns the absolute path, or undefined.
 */
export async function resolveExecutable(name: string, path = process.env.PATH ?? ''): Promise<string | undefined> {
  const candidates = name.includes('/')
    ? [resolve(name)]
    : path
        .split(delimiter)
        .filter((dir) => dir !== '')
        .map((dir) => resolve(join(dir, name)))
  for (const candidate of candidates) {
    try {
      await access(candidate, constants.X_OK)
      if ((await stat(candidate)).isFile()) return candidate
    } catch {
      // not here; keep looking
    }
  }
  return undefined
}

/** Turn bwrap's stderr from a failed trial into the fix an operator should apply. */
export function explainBwrapFailure(stderr: string): string {
  if (/namespace|uid map|gid map|unprivileged_userns/i.test(stderr)) return USERNS_FIX
  if (/mount|loopback|RTM_NEW|pivot_root|Operation not permitted/i.test(stderr)) return CONTAINER_FIX
  return 'run the same bwrap command by hand to see why it fails, then fix the host or bwrapPath'
}

/** What the probe learned about bubblewrap on this host. */
export interface BwrapFacts {
  /** Absolute path of the bwrap binary that started a confining trial sandbox. */
  readonly path: string
  /** Whether that sandbox ran in a user namespace of its own (see `MountPlan.userNamespace`). */
  readonly userNamespace: boolean
  /** The private file holding this host's seccomp program, which the trial proved in force. */
  readonly seccompFilter: string
}

/** Where the probe runs; the defaults are this process's. Tests name another platform or architecture. */
export interface ProbeHost {
  readonly platform?: NodeJS.Platform
  /** Node's name of the architecture (`process.arch`): it picks the seccomp syscall tables. */
  readonly architecture?: string
  /** Directory for the seccomp filter file (see `filterDirectory`). */
  readonly filterDirectory?: string
}

/**
 * Resolve bwrap, install the seccomp filter and start a trial sandbox with every option the
 * provider uses, first in a user namespace, else without one. The trial must prove confinement,
 * not assume it (see {@link proofScript}). Resolves with the facts; rejects with
 * `SANDBOX_UNAVAILABLE` and a message that names the fix, so nothing ever runs unconfined.
 */
export async function probeBwrap(bwrapPath: string, host: ProbeHost = {}): Promise<BwrapFacts> {
  const platform = host.platform ?? process.platform
  if (platform !== 'linux') {
    throw new SandboxError('SANDBOX_UNAVAILABLE', `bubblewrap sandboxing needs Linux; this host is ${platform}`)
  }
  const architecture = seccompArchitecture(host.architecture)
  const executable = await resolveExecutable(bwrapPath)
  if (executable === undefined) {
    const where = bwrapPath.includes('/') ? `at ${resolve(bwrapPath)}` : 'on PATH'
    throw new SandboxError('SANDBOX_UNAVAILABLE', `bubblewrap not found: no executable "${bwrapPath}" ${where}; ${INSTALL_FIX}, or set bwrapPath`)
  }
  const seccompFilter = await installSeccompFilter(host.filterDirectory ?? filterDirectory(), host.architecture)
  const launch = { bwrapPath: executable, seccompFilter }
  const hostFilters = await ownSeccompFilters()
  let outcome: TrialOutcome | undefined
  for (const userNamespace of [true, false]) {
    const plan = { ...EMPTY_MOUNT_PLAN, userNamespace }
    outcome = await runTrial(bwrapArgv(launch, ['sh', '-c', proofScript(architecture)], { mode: 'read-only', workspaceRoot: '/' }, plan))
    if (outcome.kind === 'ok') {
      assertConfined(executable, outcome.stdout, hostFilters)
      return { path: executable, userNamespace, seccompFilter }
    }
    if (outcome.kind === 'spawn-error') break
  }
  if (outcome?.kind === 'spawn-error') {
    throw new SandboxError('SANDBOX_UNAVAILABLE', `cannot run bubblewrap at ${executable}: ${outcome.message}; ${INSTALL_FIX}`)
  }
  const failed = outcome as Extract<TrialOutcome, { kind: 'failed' }>
  const said = failed.stderr.trim() || '(no output)'
  throw new SandboxError(
    'SANDBOX_UNAVAILABLE',
    `bubblewrap at ${executable} cannot create a sandbox (${failed.status}): ${said}; ${explainBwrapFailure(failed.stderr)}`,
  )
}

/** The sysctl the trial writes back unchanged: present on every Linux, harmless to rewrite. */
const PROOF_SYSCTL = '/proc/sys/vm/overcommit_ratio'

/**
 * Run inside the trial sandbox: report the effective capabilities and the seccomp state, try to
 * make `/` writable again, write a sysctl back with the value just read (so a failed confinement
 * changes nothing), call keyctl (through perl, else python3: the shell has no syscall of its own)
 * and create a user namespace. Besides shell built-ins it needs only what Debian marks essential.
 */
export function proofScript(architecture: SeccompArchitecture): string {
  const keyctl = SYSCALL_NUMBERS[architecture].keyctl!
  // KEYCTL_GET_KEYRING_ID (0) of KEY_SPEC_SESSION_KEYRING (-3), without creating it: reads only.
  const perl = `my $r = syscall(${keyctl}, 0, -3, 0); my $e = $! + 0; print "keyctl=", ($r >= 0 ? "allowed" : $e == 1 ? "refused" : "failed-$e"), "\\n"`
  const python =
    'import ctypes; libc = ctypes.CDLL(None, use_errno=True); ' +
    `r = libc.syscall(${keyctl}, 0, -3, 0); e = ctypes.get_errno(); ` +
    'print("keyctl=" + ("allowed" if r >= 0 else "refused" if e == 1 else "failed-%d" % e))'
  return [
    'while read -r key value; do case "$key" in',
    '  CapEff:) echo "capabilities=$value" ;;',
    '  Seccomp:) echo "seccomp-mode=$value" ;;',
    '  Seccomp_filters:) echo "seccomp-filters=$value" ;;',
    'esac; done < /proc/self/status',
    'if ! command -v mount >/dev/null 2>&1; then echo remount=untried',
    'elif mount -o remount,bind,rw / 2>/dev/null; then echo remount=allowed',
    'else echo remount=refused; fi',
    `if ! value=$(cat ${PROOF_SYSCTL} 2>/dev/null); then echo sysctl-write=unreadable`,
    `elif (echo "$value" > ${PROOF_SYSCTL}) 2>/dev/null; then echo sysctl-write=allowed`,
    'else echo sysctl-write=refused; fi',
    `if command -v perl >/dev/null 2>&1; then perl -e '${perl}'`,
    `elif command -v python3 >/dev/null 2>&1; then python3 -c '${python}'`,
    'else echo keyctl=untried; fi',
    'if ! command -v unshare >/dev/null 2>&1; then echo user-namespace=untried',
    'elif unshare -U true 2>/dev/null; then echo user-namespace=allowed',
    'else echo user-namespace=refused; fi',
  ].join('\n')
}

/**
 * Check the trial's report; anything but full confinement fails closed, naming every failed check:
 * no effective capability; the remount refused (or not triable, which the empty capability set
 * already rules out); the sysctl write refused; keyctl refused with the filter's EPERM (without
 * perl and python3: `Seccomp: 2` and more filters than the host process has, which proves the
 * filter loaded); a new user namespace refused (or `unshare` missing, when the filter is proven).
 */
export function assertConfined(executable: string, report: string, hostSeccompFilters = 0): void {
  const field = (name: string) => new RegExp(`^${name}=(\\S+)$`, 'm').exec(report)?.[1]
  const capabilities = field('capabilities')
  const remount = field('remount')
  const sysctl = field('sysctl-write')
  const keyctl = field('keyctl')
  const userNamespace = field('user-namespace')
  const filters = field('seccomp-filters')
  const problems: string[] = []
  if (capabilities === undefined || !/^[0-9a-f]+$/.test(capabilities)) problems.push('it did not report its capabilities')
  else if (BigInt(`0x${capabilities}`) !== 0n) problems.push(`it kept capabilities (CapEff ${capabilities})`)
  if (remount === 'allowed') problems.push('it could remount / read-write')
  else if (remount === undefined) problems.push('it did not report the remount attempt')
  if (sysctl === 'allowed') problems.push(`it could write ${PROOF_SYSCTL} (the kernel settings under /proc/sys are not read-only)`)
  else if (sysctl === 'unreadable') problems.push(`it could not read ${PROOF_SYSCTL} to try writing it back`)
  else if (sysctl !== 'refused') problems.push('it did not report the /proc/sys write')
  if (filters !== undefined && !(Number(filters) > hostSeccompFilters)) {
    problems.push(`the seccomp filter is not loaded (Seccomp_filters ${filters} inside, ${hostSeccompFilters} in the host process)`)
  }
  if (keyctl === 'allowed') problems.push('keyctl reached the kernel keyrings (the seccomp filter is not in force)')
  else if (keyctl?.startsWith('failed-')) problems.push(`keyctl failed with errno ${keyctl.slice('failed-'.length)} instead of the filter's EPERM`)
  else if (keyctl === 'untried' && (field('seccomp-mode') !== '2' || filters === undefined)) {
    problems.push('neither perl nor python3 could try keyctl, and /proc/self/status does not show the seccomp filter (Seccomp: 2, Seccomp_filters)')
  } else if (keyctl === undefined) problems.push('it did not report the keyctl attempt')
  if (userNamespace === 'allowed') problems.push('it could create a user namespace (unshare -U)')
  else if (userNamespace === undefined) problems.push('it did not report the user namespace attempt')
  if (problems.length === 0) return
  throw new SandboxError(
    'SANDBOX_UNAVAILABLE',
    `bubblewrap at ${executable} started a trial sandbox that does not confine: ${problems.join('; ')}; ` +
      'refusing to run commands unconfined. Use bubblewrap 0.8 or later (--cap-drop, --seccomp, --disable-userns) that is not replaced by a wrapper, or set bwrapPath',
  )
}

/** How many seccomp filters this process runs under (its children inherit them); 0 when the kernel does not say. */
async function ownSeccompFilters(): Promise<number> {
  const status = await readFile('/proc/self/status', 'utf8').catch(() => '')
  return Number(/^Seccomp_filters:\s*(\d+)$/m.exec(status)?.[1] ?? 0)
}

type TrialOutcome = { kind: 'ok'; stdout: string } | { kind: 'spawn-error'; message: string } | { kind: 'failed'; status: string; stderr: string }

function runTrial(argv: string[]): Promise<TrialOutcome> {
  return new Promise((settle) => {
    const [command = '', ...args] = argv
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      child.kill('SIGKILL')
    }, PROBE_TIMEOUT_MS)
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (chunk: string) => {
      if (stdout.length < OUTPUT_LIMIT) stdout = (stdout + chunk).slice(0, OUTPUT_LIMIT)
    })
    child.stderr.setEncoding('utf8')
    child.stderr.on('data', (chunk: string) => {
      if (stderr.length < OUTPUT_LIMIT) stderr = (stderr + chunk).slice(0, OUTPUT_LIMIT)
    })
    child.on('error', (error) => {
      clearTimeout(timer)
      settle({ kind: 'spawn-error', message: error.message })
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      if (code === 0) settle({ kind: 'ok', stdout })
      else if (timedOut) settle({ kind: 'failed', status: `no answer within ${PROBE_TIMEOUT_MS} ms`, stderr })
      else settle({ kind: 'failed', status: signal ? `killed by ${signal}` : `exit ${code}`, stderr })
    })
  })
}
