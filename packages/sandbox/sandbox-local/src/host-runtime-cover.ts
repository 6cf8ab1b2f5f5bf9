import { realpathSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { ensureRuntimeParent, HOST_RUNTIME_PARENT, isWithin, RuntimeParentError, SandboxError } from 'dsh-sandbox'

/** The sandbox's private, empty `/tmp`: what lies under it is hidden unless a later mount shows it again. */
const PRIVATE_TMP = '/tmp'

/**
 * Where the host runtime parent (every dsh-terminal host's attach sockets and tokens, see
 * `HOST_RUNTIME_PARENT`) must be covered with an empty tmpfs after the workspace bind, or undefined
 * when the sandbox's private `/tmp` hides it already. It is covered when the workspace contains it
 * (a workspace of `/tmp` or `/`); it is created first, so bwrap has a mount point, and must be safe
 * (`SANDBOX_UNAVAILABLE` otherwise). A workspace or readable file inside it is refused (`INVALID_POLICY`).
 */
export function hostRuntimeCover(workspaceRoot: string, readableFiles: readonly string[], parent: string = HOST_RUNTIME_PARENT): string | undefined {
  const location = canonicalLocation(parent)
  if (isWithin(location, workspaceRoot)) {
    throw new SandboxError(
      'INVALID_POLICY',
      `workspace root ${workspaceRoot} lies in ${location}, which holds the attach sockets of every dsh-terminal host; choose a project directory`,
    )
  }
  const file = readableFiles.find((path) => isWithin(location, path))
  if (file !== undefined) {
    throw new SandboxError(
      'INVALID_POLICY',
      `readable file ${file} lies in ${location}, which holds the attach sockets of every dsh-terminal host; name a file elsewhere`,
    )
  }
  if (isWithin(PRIVATE_TMP, location) && !isWithin(workspaceRoot, location)) return undefined
  try {
    ensureRuntimeParent(location)
  } catch (error) {
    if (!(error instanceof RuntimeParentError)) throw error
    throw new SandboxError('SANDBOX_UNAVAILABLE', `cannot hide the dsh-terminal attach sockets from a workspace of ${workspaceRoot}: ${error.message}`, {
      cause: error,
    })
  }
  return location
}

/** `parent` with its directory resolved (a symlinked `/tmp`), so it compares with canonical workspace paths. */
function canonicalLocation(parent: string): string {
  try {
    return join(realpathSync(dirname(parent)), basename(parent))
  } catch {
    return parent
  }
}
