import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, isAbsolute, join, resolve } from 'node:path'
import { errorMessage } from 'dsh-basics'
import { GENESIS, lineHash } from './chain'

/** Bytes read from the end of an existing log to find its last line (a record is a few KiB at most). */
const TAIL_BYTES = 1024 * 1024

/** Why the audit log cannot be opened; the host does not start without it. */
export class AuditError extends Error {
  constructor(
    /** `AUDIT_UNSAFE_PATH`: others could read or replace it; `AUDIT_BROKEN_TAIL`: the last line is cut or no record; `AUDIT_IO`: the file system refused. */
    readonly code: 'AUDIT_UNSAFE_PATH' | 'AUDIT_BROKEN_TAIL' | 'AUDIT_IO',
    message: string,
  ) {
    super(message)
    this.name = 'AuditError'
  }
}

/**
 * The default log: `$XDG_STATE_HOME/dsh-terminal/audit/audit.jsonl`, else
 * `~/.local/state/dsh-terminal/audit/audit.jsonl` (outside the workspace, and behind a sandbox's private home).
 */
export function defaultAuditPath(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  const state = env.XDG_STATE_HOME && isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : join(home, '.local', 'state')
  return join(state, 'dsh-terminal', 'audit', 'audit.jsonl')
}

/** `~/x` in the user's home, anything else against the current directory. */
export function resolveAuditPath(file: string | undefined): string {
  if (file === undefined || file === '') return defaultAuditPath()
  if (file === '~' || file.startsWith('~/')) return join(homedir(), file.slice(1))
  return resolve(file)
}

/**
 * One audit log, open for appending: mode 0600 in a directory of mode 0700, both this user's; each
 * record is one `write` to a descriptor opened with O_APPEND, carrying `seq` and `prev` (the hash of
 * the line before it). An existing log is continued from its last line.
 */
export class AuditFile {
  #fd: number | undefined
  #prev: string
  #seq: number

  private constructor(
    /** The log's absolute path. */
    readonly path: string,
    fd: number,
    prev: string,
    seq: number,
  ) {
    this.#fd = fd
    this.#prev = prev
    this.#seq = seq
  }

  /** Open (creating the directory 0700 and the file 0600) or continue the log at `path`. */
  static open(path: string): AuditFile {
    const directory = dirname(path)
    try {
      mkdirSync(directory, { recursive: true, mode: 0o700 })
    } catch (error) {
      throw new AuditError('AUDIT_IO', `cannot create the audit directory ${directory}: ${errorMessage(error)}`)
    }
    assertPrivate(directory, 'directory', 0o077)
    let fd: number
    try {
      fd = openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o600)
    } catch (error) {
      throw new AuditError('AUDIT_IO', `cannot open the audit log ${path}: ${errorMessage(error)}`)
    }
    try {
      assertPrivate(path, 'file', 0o077, fstatSync(fd))
      const { prev, seq } = continueFrom(path)
      return new AuditFile(path, fd, prev, seq)
    } catch (error) {
      closeSync(fd)
      throw error
    }
  }

  /** Append one record: `seq` and `prev` are set here, after the caller's fields. Returns the line written. */
  append(record: Record<string, unknown>): string {
    if (this.#fd === undefined) throw new AuditError('AUDIT_IO', `the audit log ${this.path} is closed`)
    const line = JSON.stringify({ ...record, seq: this.#seq, prev: this.#prev })
    const bytes = Buffer.from(`${line}\n`, 'utf8')
    let written = 0
    while (written < bytes.length) written += writeSync(this.#fd, bytes, written)
    this.#prev = lineHash(line)
    this.#seq++
    return line
  }

  /** Close the descriptor; later appends throw. Idempotent. */
  close(): void {
    if (this.#fd === undefined) return
    closeSync(this.#fd)
    this.#fd = undefined
  }
}

/** Refuse a symlink, another user's path, or one with any of `forbidden` permission bits. */
function assertPrivate(path: string, what: string, forbidden: number, stat = lstatSync(path)): void {
  const uid = process.getuid?.()
  const problem = stat.isSymbolicLink()
    ? 'is a symlink'
    : what === 'directory' && !stat.isDirectory()
      ? 'is not a directory'
      : what === 'file' && !stat.isFile()
        ? 'is not a regular file'
        : uid !== undefined && stat.uid !== uid
          ? `belongs to uid ${stat.uid}, not to this user (${uid})`
          : (stat.mode & forbidden) !== 0
            ? `has mode ${(stat.mode & 0o777).toString(8).padStart(4, '0')}; others may read it`
            : undefined
  if (!problem) return
  const cure = what === 'directory' ? `chmod 700 ${path}` : `chmod 600 ${path}`
  throw new AuditError('AUDIT_UNSAFE_PATH', `the audit ${what} ${path} ${problem}; fix it (e.g. ${cure}) or set the audit plugin's file to another place`)
}

/** The chain state after the log's last line: its hash and the next `seq`; the genesis for an empty log. */
function continueFrom(path: string): { prev: string; seq: number } {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW)
  try {
    const size = fstatSync(fd).size
    if (size === 0) return { prev: GENESIS, seq: 1 }
    const length = Math.min(size, TAIL_BYTES)
    const buffer = Buffer.alloc(length)
    let read = 0
    while (read < length) read += readSync(fd, buffer, read, length - read, size - length + read)
    const tail = buffer.toString('utf8')
    const cure = `check it with \`dsh-terminal-mcp audit verify ${path}\`, then move it aside (a new log starts)`
    if (!tail.endsWith('\n')) throw new AuditError('AUDIT_BROKEN_TAIL', `the audit log ${path} ends in a cut line; ${cure}`)
    const last = tail.slice(tail.lastIndexOf('\n', tail.length - 2) + 1, -1)
    let seq: unknown
    try {
      seq = (JSON.parse(last) as { seq?: unknown }).seq
    } catch {
      seq = undefined
    }
    if (typeof seq !== 'number' || !Number.isSafeInteger(seq))
      throw new AuditError('AUDIT_BROKEN_TAIL', `the last line of the audit log ${path} is no audit record; ${cure}`)
    return { prev: lineHash(last), seq: seq + 1 }
  } finally {
    closeSync(fd)
  }
}
