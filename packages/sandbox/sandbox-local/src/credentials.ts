import { realpathSync, statSync } from 'node:fs'
import { isAbsolute, join, relative } from 'node:path'
import { isWithin } from 'dsh-sandbox'
import type { CredentialMask, PrivateHome, ReadOnlyBind } from './args'

/*
 * Everything the host user can read is readable in a sandbox that binds `/` read-only: keys, cloud
 * tokens, registry credentials, browser profiles, and as root `/etc/shadow` and `/root`. The
 * private home already leaves the real home behind; these masks hide what would still show: the
 * system's files, `/root` when the home lies elsewhere, a credential inside a listed dotfile
 * directory, and the home's credentials when the home itself is visible (a workspace holding it).
 */

/** Credentials under the home, relative to it: hidden unless listed in `readablePaths`. */
export const HOME_CREDENTIALS: readonly string[] = [
  '.ssh',
  '.aws',
  '.kube',
  '.docker/config.json',
  '.netrc',
  '.git-credentials',
  '.npmrc',
  '.pypirc',
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.gnupg',
  '.password-store',
  '.vault-token',
  '.local/share/keyrings',
  '.config/gcloud',
  '.azure',
  '.config/gh',
  '.config/hub',
  '.mozilla',
  '.config/google-chrome',
  '.config/chromium',
]

/** The system's password hashes (and the backups `passwd` keeps beside them): hidden unless listed in `readablePaths`. */
export const SYSTEM_CREDENTIALS: readonly string[] = ['/etc/shadow', '/etc/shadow-', '/etc/gshadow', '/etc/gshadow-']

/** Root's home: hidden from a sandbox of a root host whose `$HOME` lies elsewhere (it is the private home otherwise). */
export const ROOT_HOME = '/root'

/** What decides the masks of one sandbox. */
export interface CredentialRequest {
  /** The host user's canonical home; undefined when there is none. */
  readonly home: string | undefined
  /** The session's private home, when it gets one (see `planPrivateHome`). */
  readonly privateHome: PrivateHome | undefined
  readonly workspaceRoot: string
  /** Whether the session may write its workspace (a read-only workspace of `/` is not bound again). */
  readonly writable: boolean
  /** `readablePaths` from the config: absolute, or `~/…` relative to the home. */
  readonly readablePaths: readonly string[]
  /** Whether the host runs as root (then `/root` is hidden too). */
  readonly isRoot: boolean
}

/** The masks, the opened paths to bind after them, and the dotfiles left to show (none of them a credential). */
export interface CredentialPlan {
  readonly masks: CredentialMask[]
  readonly opened: ReadOnlyBind[]
  readonly homeFiles: ReadOnlyBind[]
}

/** A configured path as a host path: `~` and `~/…` against the home (undefined without one). */
export function expandHomePath(path: string, home: string | undefined): string | undefined {
  if (path === '~') return home
  if (path.startsWith('~/')) return home === undefined ? undefined : join(home, path.slice(2))
  return isAbsolute(path) ? path : undefined
}

/**
 * The credential masks one sandbox needs. A credential the sandbox cannot see anyway (in the real
 * home behind a private one) gets none; one opened by `readablePaths` (or lying in an opened
 * directory) gets none and is bound read-only where the private home would hide it.
 */
export function planCredentialMasks(request: CredentialRequest): CredentialPlan {
  const { home, privateHome, workspaceRoot } = request
  const readable = request.readablePaths.map((path) => expandHomePath(path, home)).filter((path): path is string => path !== undefined)
  const readableReal = readable.map(canonical)
  const opened = (path: string, real: string | undefined) =>
    readable.some((entry, index) => isWithin(entry, path) || (real !== undefined && readableReal[index] !== undefined && isWithin(readableReal[index]!, real)))
  const candidates = [
    ...SYSTEM_CREDENTIALS,
    ...(request.isRoot ? [ROOT_HOME] : []),
    ...(home === undefined ? [] : HOME_CREDENTIALS.map((path) => join(home, path))),
  ]
  const closed = candidates.map((path) => ({ path, real: canonical(path) })).filter(({ path, real }) => !opened(path, real))
  // A dotfile that is, or lies inside, a closed credential is not shown at all.
  const homeFiles = (privateHome?.files ?? []).filter(
    (file) => !closed.some(({ path, real }) => isWithin(path, file.destination) || (real !== undefined && isWithin(real, file.source))),
  )
  const masks = new Map<string, CredentialMask>()
  const mask = (path: string, real: string) => {
    // Gone since it was resolved: nothing left to hide there.
    const stat = statSync(real, { throwIfNoEntry: false })
    if (path !== workspaceRoot && stat !== undefined) masks.set(path, { path, directory: stat.isDirectory() })
  }
  const workspaceBound = request.writable || workspaceRoot !== '/'
  for (const { real } of closed) {
    if (real === undefined) continue
    // It shows through `/` outside the private home, and inside a bound workspace wherever that lies.
    const shows = privateHome === undefined || !isWithin(privateHome.path, real) || (workspaceBound && isWithin(workspaceRoot, real))
    if (shows && privateHome?.path !== real) mask(real, real)
    // And inside a dotfile directory bound into the private home.
    for (const file of homeFiles) if (isWithin(file.source, real)) mask(join(file.destination, relative(file.source, real)), real)
  }
  const kept = [...masks.values()]
  const binds: ReadOnlyBind[] = []
  readable.forEach((path, index) => {
    const real = readableReal[index]
    if (real === undefined) return
    if (privateHome !== undefined && path !== privateHome.path && isWithin(privateHome.path, path)) binds.push({ source: real, destination: path })
    else if (kept.some((hidden) => hidden.path !== real && isWithin(hidden.path, real))) binds.push({ source: real, destination: real })
  })
  return { masks: kept, opened: binds, homeFiles }
}

/** The canonical path of an existing `path`, else undefined. */
function canonical(path: string): string | undefined {
  try {
    return realpathSync.native(path)
  } catch {
    return undefined
  }
}
