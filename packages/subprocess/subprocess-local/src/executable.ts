import { accessSync, constants, statSync } from 'node:fs'
import { delimiter, join, resolve } from 'node:path'
import { SubprocessError } from 'dsh-subprocess'

/**
 * Resolve `argv[0]` the way `execvp` would, against the terminal's own `PATH` and `cwd`, so a
 * missing program fails the spawn (`SPAWN_FAILED`) instead of becoming a PTY that prints an
 * exec error and exits. Synchronous on purpose: one `access` per PATH entry costs microseconds
 * here, where a thread-pool round trip per check cost a tenth of a millisecond each.
 */
export function resolveExecutable(name: string, path: string | undefined, cwd: string): string {
  const candidates = name.includes('/') ? [resolve(cwd, name)] : (path ?? '').split(delimiter).map((dir) => join(resolve(cwd, dir || '.'), name))
  const found = candidates.find(isExecutableFile)
  if (found === undefined) throw new SubprocessError('SPAWN_FAILED', `executable not found or not executable: ${name}`)
  return found
}

/** True when `path` names a directory (symlinks followed); false when it is missing or anything else. */
export function isDirectory(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isDirectory() === true
}

function isExecutableFile(path: string): boolean {
  // A missing candidate (most PATH entries) costs one stat that throws nothing; only a file is asked for X_OK.
  try {
    if (statSync(path, { throwIfNoEntry: false })?.isFile() !== true) return false
    accessSync(path, constants.X_OK)
    return true
  } catch {
    return false
  }
}
