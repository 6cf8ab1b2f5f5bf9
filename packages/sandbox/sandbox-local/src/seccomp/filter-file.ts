import { createHash, randomBytes } from 'node:crypto'
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readSync } from 'node:fs'
import { open, rename, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative, sep } from 'node:path'
import { isWithin, SandboxError } from 'dsh-sandbox'
import { errorMessage } from 'dsh-basics'
import { encodedSeccompProgram, seccompArchitecture } from './program'

/**
 * Where this uid keeps its filter files: the user's runtime directory, else /run for root, else
 * a directory of its own under the temporary directory. Never readable or writable by others.
 */
export function filterDirectory(uid: number = process.getuid?.() ?? 0, env: NodeJS.ProcessEnv = process.env): string {
  const runtime = env.XDG_RUNTIME_DIR
  if (runtime !== undefined && runtime.startsWith('/')) return join(runtime, 'dsh-sandbox')
  if (uid === 0) return '/run/dsh-sandbox'
  return join(tmpdir(), `dsh-sandbox-${uid}`)
}

/** The file name of a program: its SHA-256, so a name never stands for other content. */
export function filterFileName(program: Buffer): string {
  return `seccomp-${createHash('sha256').update(program).digest('hex').slice(0, 32)}.bpf`
}

/**
 * Make sure `directory` holds exactly `program` under its content name, and return the path.
 * Cheap when the file is already right (one open and read); otherwise it is written to a fresh
 * file and renamed into place, so a reader never sees half a program. The directory must be a real
 * directory owned by this uid and closed to everyone else, else `SANDBOX_UNAVAILABLE`.
 */
export async function installFilterFile(program: Buffer, directory: string = filterDirectory()): Promise<string> {
  const uid = process.getuid?.() ?? 0
  try {
    mkdirSync(directory, { mode: 0o700 })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw unavailable(directory, `cannot be created (${errorMessage(error)})`, error)
  }
  const info = lstatSync(directory)
  if (!info.isDirectory()) throw unavailable(directory, 'is not a directory (a symbolic link or a file is in its place)')
  if (info.uid !== uid || (info.mode & 0o077) !== 0) {
    throw unavailable(directory, `is not private to uid ${uid} (owner ${info.uid}, mode ${(info.mode & 0o777).toString(8)})`)
  }
  const path = join(directory, filterFileName(program))
  // The check every start makes is a few synchronous calls; only a rewrite goes through the thread pool.
  if (holds(path, program, uid)) return path
  const fresh = join(directory, `.${filterFileName(program)}.${process.pid}.${randomBytes(6).toString('hex')}`)
  try {
    const handle = await open(fresh, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600)
    try {
      await handle.writeFile(program)
    } finally {
      await handle.close()
    }
    await rename(fresh, path)
  } catch (error) {
    await rm(fresh, { force: true })
    throw unavailable(directory, `cannot hold the seccomp filter (${errorMessage(error)})`, error)
  }
  return path
}

/** Whether `path` is a regular file of ours, closed to others, whose content is exactly `program`. */
function holds(path: string, program: Buffer, uid: number): boolean {
  let fd: number
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch {
    return false
  }
  try {
    const info = fstatSync(fd)
    if (!info.isFile() || info.uid !== uid || (info.mode & 0o077) !== 0 || info.size !== program.length) return false
    // One byte more than the program: a file that grew since the stat does not match.
    const content = Buffer.alloc(program.length + 1)
    let length = 0
    while (length < content.length) {
      const count = readSync(fd, content, length, content.length - length, length)
      if (count === 0) break
      length += count
    }
    return length === program.length && program.equals(content.subarray(0, length))
  } finally {
    closeSync(fd)
  }
}

function unavailable(directory: string, problem: string, cause?: unknown): SandboxError {
  return new SandboxError(
    'SANDBOX_UNAVAILABLE',
    `the seccomp filter directory ${directory} ${problem}; remove it or fix its owner and mode (0700), or set XDG_RUNTIME_DIR to a private directory`,
    cause === undefined ? undefined : { cause },
  )
}

/**
 * The filter file for this host's architecture, installed (or checked) in `directory`. Rejects
 * with `SANDBOX_UNAVAILABLE` on an architecture without syscall tables or an unsafe directory.
 */
export function installSeccompFilter(directory: string = filterDirectory(), nodeArch: string = process.arch): Promise<string> {
  const architecture = seccompArchitecture(nodeArch)
  let program = programs.get(architecture)
  if (program === undefined) {
    program = encodedSeccompProgram(architecture)
    programs.set(architecture, program)
  }
  return installFilterFile(program, directory)
}

/** Encoded programs by architecture: built once, checked against the file at every start. */
const programs = new Map<string, Buffer>()

/**
 * The path to bind read-only so that a writable workspace containing the filter file cannot
 * replace it for the next session: the entry right below the workspace root on the way to the file
 * (a mount point then, which can be neither renamed nor removed). Undefined when outside the workspace.
 */
export function filterGuard(workspaceRoot: string, filterFile: string): string | undefined {
  if (!isWithin(workspaceRoot, filterFile)) return undefined
  const [first] = relative(workspaceRoot, filterFile).split(sep)
  return first === undefined || first === '' ? undefined : join(workspaceRoot, first)
}
