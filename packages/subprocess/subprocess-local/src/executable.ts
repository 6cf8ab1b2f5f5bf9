import { constants } from 'node:fs'
import { access, stat } from 'node:fs/promises'
import { delimiter, join, resolve } from 'node:path'
import { SubprocessError } from 'dsh-subprocess'

/**
 * Resolve `argv[0]` the way `execvp` would, against the terminal's own `PATH` and `cwd`, so a
 * missing program fails the spawn (`SPAWN_FAILED`) instead of becoming a PTY that prints an
 * exec error and exits.
 */
export async function resolveExecutable(name: string, path: string | undefined, cwd: string): Promise<string> {
  const candidates = name.includes('/') ? [resolve(cwd, name)] : (path ?? '').split(delimiter).map((dir) => join(resolve(cwd, dir || '.'), name))
  for (const candidate of candidates) {
    if (await isExecutableFile(candidate)) return candidate
  }
  throw new SubprocessError('SPAWN_FAILED', `executable not found or not executable: ${name}`)
}

async function isExecutableFile(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK)
    return (await stat(path)).isFile()
  } catch {
    return false
  }
}
