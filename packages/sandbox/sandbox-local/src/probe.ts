import { spawn } from 'node:child_process'
import { constants } from 'node:fs'
import { access, stat } from 'node:fs/promises'
import { delimiter, join, resolve } from 'node:path'
import { SandboxError } from 'dsh-sandbox'
import { bwrapArgv, EMPTY_MOUNT_PLAN } from './args'

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
}

/**
 * Resolve bwrap and start a trial sandbox with every option the provider uses, first in a user
 * namespace, else without one. The trial must prove confinement, not assume it: no effective
 * capability and a refused remount of `/`. Resolves with the facts; rejects with
 * `SANDBOX_UNAVAILABLE` and a message that names the fix, so nothing ever runs unconfined.
 */
export async function probeBwrap(bwrapPath: string, platform: NodeJS.Platform = process.platform): Promise<BwrapFacts> {
  if (platform !== 'linux') {
    throw new SandboxError('SANDBOX_UNAVAILABLE', `bubblewrap sandboxing needs Linux; this host is ${platform}`)
  }
  const executable = await resolveExecutable(bwrapPath)
  if (executable === undefined) {
    const where = bwrapPath.includes('/') ? `at ${resolve(bwrapPath)}` : 'on PATH'
    throw new SandboxError('SANDBOX_UNAVAILABLE', `bubblewrap not found: no executable "${bwrapPath}" ${where}; ${INSTALL_FIX}, or set bwrapPath`)
  }
  let outcome: TrialOutcome | undefined
  for (const userNamespace of [true, false]) {
    const plan = { ...EMPTY_MOUNT_PLAN, userNamespace }
    outcome = await runTrial(bwrapArgv(executable, ['sh', '-c', PROOF_SCRIPT], { mode: 'read-only', workspaceRoot: '/' }, plan))
    if (outcome.kind === 'ok') {
      assertConfined(executable, outcome.stdout)
      return { path: executable, userNamespace }
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

/**
 * Run inside the trial sandbox: report the effective capabilities and try to make `/` writable
 * again. Only shell built-ins and `mount` (util-linux, present on every Linux that runs bwrap).
 */
export const PROOF_SCRIPT = [
  'while read -r key value; do [ "$key" = CapEff: ] && echo "capabilities=$value"; done < /proc/self/status',
  'if ! command -v mount >/dev/null 2>&1; then echo remount=untried',
  'elif mount -o remount,bind,rw / 2>/dev/null; then echo remount=allowed',
  'else echo remount=refused; fi',
].join('\n')

/**
 * Check the trial's report: every effective capability dropped, and the remount refused (or not
 * triable, which the empty capability set already rules out). Anything else fails closed.
 */
export function assertConfined(executable: string, report: string): void {
  const capabilities = /^capabilities=([0-9a-f]+)$/m.exec(report)?.[1]
  const remount = /^remount=(\w+)$/m.exec(report)?.[1]
  const problems: string[] = []
  if (capabilities === undefined) problems.push('it did not report its capabilities')
  else if (BigInt(`0x${capabilities}`) !== 0n) problems.push(`it kept capabilities (CapEff ${capabilities})`)
  if (remount === 'allowed') problems.push('it could remount / read-write')
  else if (remount === undefined) problems.push('it did not report the remount attempt')
  if (problems.length === 0) return
  throw new SandboxError(
    'SANDBOX_UNAVAILABLE',
    `bubblewrap at ${executable} started a trial sandbox that does not confine: ${problems.join(' and ')}; ` +
      'refusing to run commands unconfined. Use a bubblewrap that supports --cap-drop (0.3+) and is not replaced by a wrapper, or set bwrapPath',
  )
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
