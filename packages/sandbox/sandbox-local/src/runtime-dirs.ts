import { lstatSync, realpathSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { isAbsolute } from 'node:path'

/**
 * Directories of the host user's sessions that a sandbox gets an empty, private copy of:
 * `$XDG_RUNTIME_DIR` holds sockets that trust any process of the same uid (the user's D-Bus and
 * systemd, whose `StartTransientUnit` runs commands outside, the ssh and gpg agents, and
 * `dsh-terminal attach`'s sockets, which type into every session of a host); a temporary directory
 * other than `/tmp` (`$TMPDIR`) may hold the same. A read-only mount does not stop connect(2), so
 * these are covered with a tmpfs. `/tmp` itself is private in every sandbox already.
 */
export async function privateRuntimeDirs(env: NodeJS.ProcessEnv = process.env, temporary: string = tmpdir()): Promise<string[]> {
  return privateRuntimeDirsNow(env, temporary)
}

/** {@link privateRuntimeDirs}, synchronously (the check of a sandbox started ahead is synchronous). */
export function privateRuntimeDirsNow(env: NodeJS.ProcessEnv = process.env, temporary: string = tmpdir()): string[] {
  const candidates = [env.XDG_RUNTIME_DIR, temporary]
  const found = candidates.map((path) => existingDirectory(path))
  const dirs = found.filter((path): path is string => path !== undefined && path !== '/' && path !== '/tmp')
  return [...new Set(dirs)]
}

/** The canonical path of `path` when it is an absolute path to an existing directory. */
function existingDirectory(path: string | undefined): string | undefined {
  if (!path || !isAbsolute(path)) return undefined
  try {
    const canonical = realpathSync.native(path)
    return lstatSync(canonical).isDirectory() ? canonical : undefined
  } catch {
    return undefined
  }
}
