import { lstatSync, mkdirSync, readdirSync, rmSync } from 'node:fs'
import { processExists } from 'dsh-basics'
import { dirname, join } from 'node:path'
import { assertRuntimeParent, ensureRuntimeParent, hostRuntimeDir, RuntimeParentError } from 'dsh-sandbox'

/** Why the runtime directory, a socket or a token file cannot be trusted. */
export type RuntimeDirErrorCode = 'UNSAFE_RUNTIME_DIR' | 'FOREIGN_SOCKET'

/** A runtime path that is not private to this user: another user (or a symlink) could intercept it. */
export class RuntimeDirError extends Error {
  constructor(
    /** `UNSAFE_RUNTIME_DIR` for the directory, `FOREIGN_SOCKET` for one host's socket or token. */
    readonly code: RuntimeDirErrorCode,
    message: string,
  ) {
    super(message)
    this.name = 'RuntimeDirError'
  }
}

/** The files one host owns in the runtime directory. */
export interface HostFiles {
  /** The host's process id (the file names' stem). */
  readonly pid: number
  /** `<dir>/<pid>.sock`: the Unix socket it listens on. */
  readonly socketPath: string
  /** `<dir>/<pid>.token`: the secret a client sends first. */
  readonly tokenPath: string
}

/** The current uid; hosts and clients only trust paths owned by it. */
export function currentUid(): number {
  return process.getuid?.() ?? -1
}

/**
 * Where hosts put their sockets: `/tmp/dsh-terminal/<uid>`, the same for every host of this uid
 * whatever its environment, so every sandbox can hide it (the rule lives in dsh-sandbox).
 */
export function runtimeDirPath(): string {
  return hostRuntimeDir(currentUid())
}

/**
 * Throw `UNSAFE_RUNTIME_DIR` unless the directory holding `dir` is safe (see dsh-sandbox's
 * `assertRuntimeParent`); with `create`, make it first (mode 1777) when it is missing.
 */
export function assertRuntimeParentOf(dir: string, create = false): void {
  try {
    if (create) ensureRuntimeParent(dirname(dir), currentUid())
    else assertRuntimeParent(dirname(dir), currentUid())
  } catch (error) {
    if (error instanceof RuntimeParentError) throw new RuntimeDirError('UNSAFE_RUNTIME_DIR', error.message)
    throw error
  }
}

/**
 * Throw unless `dir` is a real directory (not a symlink) owned by us with no group or other bits,
 * so nobody else can plant, replace or read a socket or token inside it.
 */
export function assertPrivateDir(dir: string): void {
  let stat
  try {
    stat = lstatSync(dir)
  } catch (error) {
    throw new RuntimeDirError('UNSAFE_RUNTIME_DIR', `cannot inspect the runtime directory ${dir}: ${(error as Error).message}`)
  }
  if (stat.isSymbolicLink()) throw new RuntimeDirError('UNSAFE_RUNTIME_DIR', `${dir} is a symlink; remove it (dsh-terminal creates its own directory)`)
  if (!stat.isDirectory()) throw new RuntimeDirError('UNSAFE_RUNTIME_DIR', `${dir} is not a directory; remove it`)
  if (stat.uid !== currentUid()) {
    throw new RuntimeDirError('UNSAFE_RUNTIME_DIR', `${dir} belongs to uid ${stat.uid}, not to you (uid ${currentUid()}); refusing to use it`)
  }
  if ((stat.mode & 0o077) !== 0) {
    throw new RuntimeDirError('UNSAFE_RUNTIME_DIR', `${dir} has mode ${(stat.mode & 0o777).toString(8)}; it must be 700 (run: chmod 700 ${dir})`)
  }
}

/**
 * Create the runtime directory (mode 0700, and its parent, mode 1777) if missing, then verify both as
 * {@link assertRuntimeParentOf} and {@link assertPrivateDir} do.
 */
export function ensureRuntimeDir(dir: string = runtimeDirPath()): string {
  assertRuntimeParentOf(dir, true)
  try {
    mkdirSync(dir, { mode: 0o700 })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new RuntimeDirError('UNSAFE_RUNTIME_DIR', `cannot create the runtime directory ${dir}: ${(error as Error).message}`)
    }
  }
  assertPrivateDir(dir)
  return dir
}

/** The socket and token paths of host `pid` in `dir`. */
export function hostFiles(dir: string, pid: number): HostFiles {
  return { pid, socketPath: join(dir, `${pid}.sock`), tokenPath: join(dir, `${pid}.token`) }
}

/** Every host that left a socket in `dir`, by pid order (alive or not). */
export function listHostFiles(dir: string): HostFiles[] {
  const pids = new Set<number>()
  for (const name of readdirSync(dir)) {
    const match = /^(\d+)\.(sock|token)$/.exec(name)
    if (match?.[2] === 'sock') pids.add(Number(match[1]))
  }
  return [...pids].sort((a, b) => a - b).map((pid) => hostFiles(dir, pid))
}

/** Remove sockets and tokens of hosts that died without cleaning up (a crash, SIGKILL); returns their pids. */
export function sweepDeadHosts(dir: string): number[] {
  const dead = new Set<number>()
  for (const name of readdirSync(dir)) {
    const match = /^(\d+)\.(sock|token)$/.exec(name)
    if (!match) continue
    const pid = Number(match[1])
    if (pid === process.pid || processExists(pid)) continue
    rmSync(join(dir, name), { force: true })
    dead.add(pid)
  }
  return [...dead]
}

/** Throw `FOREIGN_SOCKET` unless `path` exists, is of the `kind` given, and is owned by us. */
export function assertOwnedEntry(path: string, kind: 'socket' | 'file'): void {
  let stat
  try {
    stat = lstatSync(path)
  } catch (error) {
    throw new RuntimeDirError('FOREIGN_SOCKET', `cannot inspect ${path}: ${(error as Error).message}`)
  }
  const rightKind = kind === 'socket' ? stat.isSocket() : stat.isFile()
  if (!rightKind) throw new RuntimeDirError('FOREIGN_SOCKET', `${path} is not a ${kind}; refusing to use it`)
  if (stat.uid !== currentUid()) {
    throw new RuntimeDirError('FOREIGN_SOCKET', `${path} belongs to uid ${stat.uid}, not to you (uid ${currentUid()}); refusing to talk to it`)
  }
}
