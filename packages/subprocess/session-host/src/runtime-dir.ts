import { lstatSync, mkdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { ensureRuntimeParent, hostRuntimeDir } from 'dsh-sandbox'

/** The session host's socket or its directory cannot be trusted (another owner, a symlink, open modes). */
export class SessionHostDirError extends Error {
  /** Always `UNSAFE_RUNTIME_DIR`, the code the attach socket uses for the same checks. */
  readonly code = 'UNSAFE_RUNTIME_DIR'

  constructor(message: string) {
    super(message)
    this.name = 'SessionHostDirError'
  }
}

/** The uid whose directory is used: sockets are private to it. */
function currentUid(): number {
  return process.getuid?.() ?? -1
}

/**
 * The per-user socket: `/tmp/dsh-terminal/<uid>/session-host.sock`, in the directory the attach
 * sockets use, so every sandbox already hides it (dsh-sandbox's runtime directory rule).
 */
export function defaultSocketPath(uid: number = currentUid()): string {
  return join(hostRuntimeDir(uid), 'session-host.sock')
}

/**
 * Create the socket's directory (0700) and its parent's parent rule as the attach socket does, then
 * check it: a real directory owned by this uid with no group or other bits. Returns the directory.
 */
export function ensureSocketDir(socketPath: string): string {
  const dir = dirname(socketPath)
  try {
    ensureRuntimeParent(dirname(dir), currentUid())
  } catch (error) {
    throw new SessionHostDirError((error as Error).message)
  }
  try {
    mkdirSync(dir, { mode: 0o700 })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw new SessionHostDirError(`cannot create ${dir}: ${(error as Error).message}`)
  }
  assertPrivateDir(dir)
  return dir
}

/** Throw {@link SessionHostDirError} unless `dir` is a real directory of this uid with mode 0700. */
export function assertPrivateDir(dir: string): void {
  let stat
  try {
    stat = lstatSync(dir)
  } catch (error) {
    throw new SessionHostDirError(`cannot inspect ${dir}: ${(error as Error).message}`)
  }
  if (stat.isSymbolicLink() || !stat.isDirectory()) throw new SessionHostDirError(`${dir} is not a directory (a symlink or a file); remove it`)
  if (stat.uid !== currentUid()) throw new SessionHostDirError(`${dir} belongs to uid ${stat.uid}, not to you (uid ${currentUid()}); refusing to use it`)
  if ((stat.mode & 0o077) !== 0) throw new SessionHostDirError(`${dir} has mode ${(stat.mode & 0o777).toString(8)}; it must be 700 (run: chmod 700 ${dir})`)
}

/** Throw {@link SessionHostDirError} unless `path` is a socket owned by this uid (checked before connecting). */
export function assertOwnSocket(path: string): void {
  assertPrivateDir(dirname(path))
  const stat = lstatSync(path)
  if (!stat.isSocket()) throw new SessionHostDirError(`${path} is not a socket; refusing to talk to it`)
  if (stat.uid !== currentUid()) throw new SessionHostDirError(`${path} belongs to uid ${stat.uid}, not to you; refusing to talk to it`)
}
