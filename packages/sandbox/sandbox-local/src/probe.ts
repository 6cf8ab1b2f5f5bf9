import { spawn } from 'node:child_process'
import { constants } from 'node:fs'
import { access, stat } from 'node:fs/promises'
import { delimiter, join, resolve } from 'node:path'
import { SandboxError } from 'dsh-sandbox'
import { bwrapArgv } from './args'

/** Bound on the one-off trial sandbox; bwrap normally answers in a few milliseconds. */
const PROBE_TIMEOUT_MS = 10_000
/** Bound on the stderr kept from the trial, enough for bwrap's one-line diagnostics. */
const STDERR_LIMIT = 4096

const INSTALL_FIX = 'install bubblewrap: apt-get install bubblewrap (Debian/Ubuntu) or dnf install bubblewrap (Fedora)'
const USERNS_FIX =
  'enable unprivileged user namespaces: sysctl -w kernel.unprivileged_userns_clone=1 (Debian) and user.max_user_namespaces > 0; ' +
  'on Ubuntu 23.10+ also allow them for bwrap: sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for bwrap'
const CONTAINER_FIX =
  'run on a host, or in a container allowed to mount and unshare namespaces (a seccomp/AppArmor profile that permits them, or --privileged)'

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

/**
 * Resolve bwrap and start one trial sandbox with every feature the provider uses (pid and network
 * namespaces, read-only root, /dev, /proc, tmpfs). Resolves with bwrap's absolute path; rejects
 * with `SANDBOX_UNAVAILABLE` and a message that names the fix.
 */
export async function probeBwrap(bwrapPath: string, platform: NodeJS.Platform = process.platform): Promise<string> {
  if (platform !== 'linux') {
    throw new SandboxError('SANDBOX_UNAVAILABLE', `bubblewrap sandboxing needs Linux; this host is ${platform}`)
  }
  const executable = await resolveExecutable(bwrapPath)
  if (executable === undefined) {
    const where = bwrapPath.includes('/') ? `at ${resolve(bwrapPath)}` : 'on PATH'
    throw new SandboxError(
      'SANDBOX_UNAVAILABLE',
      `bubblewrap not found: no executable "${bwrapPath}" ${where}; ${INSTALL_FIX}, or set bwrapPath`,
    )
  }
  const trial = bwrapArgv(executable, ['sh', '-c', 'exit 0'], { mode: 'read-only', workspaceRoot: '/' })
  const outcome = await runTrial(trial)
  if (outcome.kind === 'ok') return executable
  if (outcome.kind === 'spawn-error') {
    throw new SandboxError('SANDBOX_UNAVAILABLE', `cannot run bubblewrap at ${executable}: ${outcome.message}; ${INSTALL_FIX}`)
  }
  const said = outcome.stderr.trim() || '(no output)'
  throw new SandboxError(
    'SANDBOX_UNAVAILABLE',
    `bubblewrap at ${executable} cannot create a sandbox (${outcome.status}): ${said}; ${explainBwrapFailure(outcome.stderr)}`,
  )
}

type TrialOutcome =
  | { kind: 'ok' }
  | { kind: 'spawn-error'; message: string }
  | { kind: 'failed'; status: string; stderr: string }

function runTrial(argv: string[]): Promise<TrialOutcome> {
  return new Promise((settle) => {
    const [command = '', ...args] = argv
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      child.kill('SIGKILL')
    }, PROBE_TIMEOUT_MS)
    child.stderr.setEncoding('utf8')
    child.stderr.on('data', (chunk: string) => {
      if (stderr.length < STDERR_LIMIT) stderr = (stderr + chunk).slice(0, STDERR_LIMIT)
    })
    child.on('error', (error) => {
      clearTimeout(timer)
      settle({ kind: 'spawn-error', message: error.message })
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      if (code === 0) settle({ kind: 'ok' })
      else if (timedOut) settle({ kind: 'failed', status: `no answer within ${PROBE_TIMEOUT_MS} ms`, stderr })
      else settle({ kind: 'failed', status: signal ? `killed by ${signal}` : `exit ${code}`, stderr })
    })
  })
}
