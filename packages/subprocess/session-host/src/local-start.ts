import { spawn } from 'node:child_process'
import { closeSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { processExists } from 'dsh-basics'
import { connect, type Socket } from 'node:net'
import { dirname, join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { assertOwnSocket, ensureSocketDir } from './runtime-dir'
import { SubprocessError, scrubEnvironment } from 'dsh-subprocess'

/** How the local session host is reached and, when it is not running, started. */
export interface LocalSocketOptions {
  /** Where the session host listens (its directory must be this uid's, 0700). */
  readonly socketPath: string
  /** The argv that runs `dsh-session-host` (the socket and idle options are appended). */
  readonly command: readonly string[]
  /** More options for a session host started here (`--max-terminals N`, …), appended after the socket and idle ones. */
  readonly extraArgs?: readonly string[]
  /** Passed as `--idle-exit-ms` to a session host started here. */
  readonly idleExitMs: number
  /** Deadline for the lock, the start and the first connection. */
  readonly startTimeoutMs: number
}

/**
 * Connect to the per-user session host, starting it the way tmux starts its server when nothing
 * answers: under a lock file (so two racing starters make one session host), detached in a session
 * of its own, stdio not inherited, its log in `session-host.log` beside the socket. Used by
 * dsh-subprocess-remote and by the `--stdio` relay, so both reach (and start) the same one.
 */
export async function connectLocalSessionHost(options: LocalSocketOptions): Promise<Socket> {
  const deadline = performance.now() + options.startTimeoutMs
  const existing = await reachLive(options.socketPath, deadline)
  if (existing) return existing
  const dir = ensureSocketDir(options.socketPath)
  const release = await lock(join(dir, 'session-host.lock'), deadline)
  try {
    const raced = await reachLive(options.socketPath, deadline)
    if (raced) return raced
    const started = startDetached(options, join(dir, 'session-host.log'))
    for (let delay = 2; ; delay = Math.min(delay * 2, 50)) {
      const socket = await reachLive(options.socketPath, deadline)
      if (socket) return socket
      if (started.exited !== undefined) throw startFailed(`it exited with ${started.exited} before listening; see ${join(dir, 'session-host.log')}`)
      if (performance.now() > deadline)
        throw startFailed(`it did not listen on ${options.socketPath} within ${options.startTimeoutMs} ms; see ${join(dir, 'session-host.log')}`)
      await sleep(delay)
    }
  } finally {
    release()
  }
}

function startFailed(why: string): SubprocessError {
  return new SubprocessError('SPAWN_FAILED', `could not start the session host: ${why}`)
}

/**
 * A connected socket, or undefined when nothing listens. A live session host that is merely busy
 * (EAGAIN: its listen backlog is full) is waited for until the deadline, never taken for a dead one:
 * starting another would only meet `SESSION_HOST_RUNNING`.
 */
async function reachLive(path: string, deadline: number): Promise<Socket | undefined> {
  for (let delay = 2; ; delay = Math.min(delay * 2, 50)) {
    const reached = await tryConnect(path)
    if (reached !== 'busy') return reached
    if (performance.now() > deadline)
      throw startFailed(`the session host on ${path} is alive but accepted no connection in time (its listen backlog stayed full)`)
    await sleep(delay)
  }
}

/** A connected socket, `busy` for a live listener with a full backlog, or undefined when nothing listens (missing or stale socket). Foreign sockets throw. */
async function tryConnect(path: string): Promise<Socket | 'busy' | undefined> {
  try {
    assertOwnSocket(path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    // The directory may simply not exist yet; anything else (another owner, open modes) is refused.
    if ((error as { code?: string }).code === 'UNSAFE_RUNTIME_DIR' && /cannot inspect/.test((error as Error).message)) return undefined
    throw new SubprocessError('SPAWN_FAILED', `refusing the session host socket: ${(error as Error).message}`)
  }
  return new Promise((resolve) => {
    const socket = connect(path)
    socket.once('connect', () => {
      socket.removeAllListeners('error')
      resolve(socket)
    })
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'EAGAIN' ? 'busy' : undefined))
  })
}

/** Start the session host in a session of its own, its output to `logPath`; reports its exit status. */
function startDetached(options: LocalSocketOptions, logPath: string): { exited: number | string | undefined } {
  const log = openSync(logPath, 'a', 0o600)
  const [file = '', ...args] = options.command
  const state: { exited: number | string | undefined } = { exited: undefined }
  try {
    const child = spawn(file, [...args, '--socket', options.socketPath, '--idle-exit-ms', String(options.idleExitMs), ...(options.extraArgs ?? [])], {
      detached: true,
      stdio: ['ignore', log, log],
      cwd: dirname(options.socketPath),
      // It outlives this process and serves later clients: it keeps none of this one's credentials
      // (terminals never see its environment anyway: each spawn sends the complete one).
      env: scrubEnvironment(process.env),
    })
    child.once('error', (error) => (state.exited = error.message))
    child.once('exit', (code, signal) => (state.exited = code ?? signal ?? 'unknown'))
    child.unref()
  } finally {
    closeSync(log)
  }
  return state
}

/** Take the lock file (its content is the owner's pid; a dead owner's lock is taken over). */
async function lock(path: string, deadline: number): Promise<() => void> {
  for (let delay = 2; ; delay = Math.min(delay * 2, 50)) {
    try {
      writeFileSync(path, `${process.pid}\n`, { flag: 'wx', mode: 0o600 })
      return () => rmSync(path, { force: true })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw startFailed(`cannot create the lock ${path}: ${(error as Error).message}`)
    }
    if (!ownerAlive(path)) {
      rmSync(path, { force: true })
      continue
    }
    if (performance.now() > deadline) throw startFailed(`another process holds ${path}`)
    await sleep(delay)
  }
}

/** True while the pid in the lock file names a live process (an unreadable or empty file counts as live, briefly). */
function ownerAlive(path: string): boolean {
  let pid: number
  try {
    pid = Number(readFileSync(path, 'utf8').trim())
  } catch {
    return false
  }
  if (!Number.isSafeInteger(pid) || pid <= 0) return true
  return processExists(pid)
}
