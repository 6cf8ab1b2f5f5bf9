import { realpathSync } from 'node:fs'
import { resolve } from 'node:path'
import { isWithin } from 'dsh-sandbox'
import type { MountPlan } from './args'
import type { LocalSandboxConfig } from './config'
import { CONTROL_SOCKETS, presentSockets, presentSocketsNow } from './control-sockets'
import { gitProtections } from './git-metadata'
import type { SearchTrace } from './search-trace'
import { privateRuntimeDirs, privateRuntimeDirsNow } from './runtime-dirs'

/** What the provider protects inside a writable workspace, decided by config and host facts. */
export interface ProtectionSources {
  readonly config: Pick<LocalSandboxConfig, 'protectGitMetadata' | 'protectHostInstallation' | 'protectedPaths'>
  /** Canonical installation roots of the running host (see `hostInstallationRoots`). */
  readonly installationRoots: readonly string[]
  /** Socket paths to hide when present; default {@link CONTROL_SOCKETS}. */
  readonly controlSockets?: readonly string[]
  /** Directories to replace with an empty tmpfs; default {@link privateRuntimeDirs} of this process. */
  readonly privateDirs?: readonly string[]
}

/**
 * The mounts one sandbox gets on this host right now: the read-only and pinned paths inside a
 * writable workspace (only those inside it matter: everything else is read-only already) and the
 * control sockets present. Computed per confine, since a repository or socket may appear later.
 */
export async function planMounts(
  workspaceRoot: string,
  writable: boolean,
  userNamespace: boolean,
  sources: ProtectionSources,
  trace?: SearchTrace,
): Promise<MountPlan> {
  const [hidden, privateDirs] = await Promise.all([presentSockets(sources.controlSockets ?? CONTROL_SOCKETS), sources.privateDirs ?? privateRuntimeDirs()])
  if (!writable) return { userNamespace, readOnly: [], pinned: [], hidden, privateDirs }
  const { config } = sources
  const git = config.protectGitMetadata ? await gitProtections(workspaceRoot, undefined, trace) : { readOnly: [], pinned: [] }
  const configured = config.protectedPaths.map((path) => canonicalOrUndefined(resolve(workspaceRoot, path)))
  const installation = config.protectHostInstallation ? sources.installationRoots : []
  const readOnly = [...new Set([...installation, ...configured, ...git.readOnly])].filter(
    (path): path is string => path !== undefined && isWithin(workspaceRoot, path),
  )
  return { userNamespace, readOnly, pinned: git.pinned, hidden, privateDirs }
}

/**
 * Everything a plan depends on besides the git search, read now: the control sockets present, the
 * private directories, the configured protected paths that exist. Cheap (a few lstat and realpath
 * calls): a sandbox started ahead is current only while this has not changed.
 */
export function planInputs(workspaceRoot: string, writable: boolean, sources: ProtectionSources): string {
  const hidden = presentSocketsNow(sources.controlSockets ?? CONTROL_SOCKETS)
  const privateDirs = sources.privateDirs ?? privateRuntimeDirsNow()
  const configured = writable ? sources.config.protectedPaths.map((path) => canonicalOrUndefined(resolve(workspaceRoot, path)) ?? '') : []
  return JSON.stringify([hidden, privateDirs, configured])
}

/** The canonical path of an existing `path`, else undefined (a protected path that does not exist is skipped). */
function canonicalOrUndefined(path: string): string | undefined {
  try {
    return realpathSync.native(path)
  } catch {
    return undefined
  }
}
