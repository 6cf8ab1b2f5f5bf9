import { chmod, lstat, mkdir, readdir } from 'node:fs/promises'
import { homedir } from 'node:os'
import { isAbsolute, join, resolve } from 'node:path'
import { RecorderError } from './errors'

/** Owner only: nobody else lists, reads or plants files there. */
const DIRECTORY_MODE = 0o700

/** How every recording's name ends. */
export const RECORDING_EXTENSION = '.cast'

/**
 * A recording's file name: its start time (UTC, sortable, no colons), the session id and the host's
 * pid (session ids start over with every host), e.g. `2026-12-03T10-15-02.123Z_pty-3_4711.cast`.
 */
export function recordingFileName(startedAt: number, sessionId: string, hostPid: number): string {
  const stamp = new Date(startedAt).toISOString().replaceAll(':', '-')
  return `${stamp}_${sessionId.replace(/[^\w.-]/g, '_')}_${hostPid}${RECORDING_EXTENSION}`
}

/** A name the recorder could have written: no path, no hidden file, the `.cast` extension. */
export function isRecordingName(name: string): boolean {
  return /^[\w.-]+\.cast$/.test(name) && !name.startsWith('.')
}

/** The default directory: `$XDG_STATE_HOME/dsh-terminal/recordings`, else `~/.local/state/dsh-terminal/recordings`. */
export function defaultRecordingDirectory(environment: Readonly<Record<string, string | undefined>> = process.env): string {
  const state = environment.XDG_STATE_HOME && isAbsolute(environment.XDG_STATE_HOME) ? environment.XDG_STATE_HOME : join(homedir(), '.local', 'state')
  return join(state, 'dsh-terminal', 'recordings')
}

/** The configured directory as an absolute path (`''` means the default; a relative one is taken from the host's working directory). */
export function resolveRecordingDirectory(configured: string): string {
  return configured === '' ? defaultRecordingDirectory() : resolve(configured)
}

/**
 * Create the directory (and its missing parents) with mode 0700, or check an existing one: a real
 * directory (not a symbolic link) owned by this user; looser permissions are tightened to 0700.
 * `RECORD_DIR_UNSAFE` when it belongs to someone else or is not a directory.
 */
export async function preparePrivateDirectory(path: string): Promise<void> {
  await mkdir(path, { recursive: true, mode: DIRECTORY_MODE })
  const stat = await lstat(path)
  if (!stat.isDirectory())
    throw new RecorderError('RECORD_DIR_UNSAFE', `the recording directory ${path} is not a directory (a symbolic link?); name a real directory in record.dir`)
  const uid = process.getuid?.()
  if (uid !== undefined && stat.uid !== uid) {
    throw new RecorderError(
      'RECORD_DIR_UNSAFE',
      `the recording directory ${path} belongs to uid ${stat.uid}, not to this user (${uid}); name a directory of your own in record.dir`,
    )
  }
  if ((stat.mode & 0o777) !== DIRECTORY_MODE) await chmod(path, DIRECTORY_MODE)
}

/** The recordings in `directory`, newest first by name (names start with the start time). */
export async function listRecordingNames(directory: string): Promise<string[]> {
  let names: string[]
  try {
    names = await readdir(directory)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
  return names.filter(isRecordingName).sort().reverse()
}
