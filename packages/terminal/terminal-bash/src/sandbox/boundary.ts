import { stat } from 'node:fs/promises'
import { resolve } from 'node:path'
import { type ConfinedMode, isConfinedMode, type Sandbox, type SandboxPolicy } from 'dsh-sandbox'
import type { SpawnWrapper, WrappedAhead } from 'dsh-subprocess'
import type { ResolvedSandboxPolicy } from 'dsh-sandbox-policy'
import { shellFailure } from '../errors'

/**
 * The process boundary of one shell, as the backend resolved it at spawn: the owner's policy
 * (resolved once, it stays the boundary for the session's whole life), how the policy canonicalises
 * a working directory, and where the sandbox provider of this world is read from.
 */
export interface ShellBoundary {
  /** The owner's effective mode and the workspace root (`ctx.sandboxPolicy.resolve(owner)`). */
  readonly policy: ResolvedSandboxPolicy
  /**
   * Canonical working directory under `policy` (`ctx.sandboxPolicy.resolveCwd`): symlinks resolved,
   * and outside the workspace refused (`CWD_OUTSIDE_WORKSPACE`) under a confined mode.
   */
  readonly resolveCwd: (policy: ResolvedSandboxPolicy, cwd?: string) => Promise<string>
  /**
   * The sandbox provider of the same context (`ctx.get('sandbox')`), read only when a confined mode
   * needs it, so a deployment under `danger-full-access` needs none.
   */
  readonly sandbox: () => Pick<Sandbox, 'confine' | 'confineAhead' | 'environment'> | undefined
}

/**
 * The shell's working directory: the workspace root by default, a relative `cwd` resolved against
 * it. It must exist and be a directory (`INVALID_CWD`, the backend's own messages); then the policy
 * canonicalises it and, under a confined mode, refuses one outside the workspace.
 */
export async function resolveShellCwd(boundary: ShellBoundary, cwd: string | undefined): Promise<string> {
  if (cwd === '') throw shellFailure.emptyCwd()
  const { policy } = boundary
  const requested = await resolveWorkingDirectory(cwd === undefined ? policy.workspaceRoot : resolve(policy.workspaceRoot, cwd))
  return boundary.resolveCwd(policy, requested)
}

/**
 * Wrap the shell's argv once for its mode. `danger-full-access` starts it directly; a confined mode
 * requires the sandbox provider (`SANDBOX_REQUIRED` without one) and its `confine` result, spawned
 * exactly as returned (`SANDBOX_INVALID_ARGV` when it is empty), with `readableFiles` (host files
 * the shell needs although the sandbox may hide them) shown read-only. A provider's own refusal (a
 * `SandboxError`, e.g. `SANDBOX_UNAVAILABLE` when bwrap is missing) propagates unchanged: the shell
 * is never started unconfined instead.
 */
export async function confineShellArgv(
  argv: readonly string[],
  boundary: ShellBoundary,
  cwd: string,
  readableFiles: readonly string[] = [],
): Promise<readonly string[]> {
  const { mode } = boundary.policy
  if (!isConfinedMode(mode)) return argv
  const sandbox = readSandbox(boundary)
  if (!sandbox) throw shellFailure.sandboxRequired(mode)
  const confined: unknown = await sandbox.confine(argv, sandboxRequest(mode, boundary, cwd, readableFiles))
  if (!isCommand(confined)) throw shellFailure.sandboxInvalidArgv(mode)
  return [...confined]
}

/**
 * The shell's confinement as a spawn wrapper, so the subprocess provider can keep sandboxes started
 * ahead (see `SpawnWrapper`): `wrap` is {@link confineShellArgv}, `wrapAhead` the sandbox's
 * `confineAhead`. Undefined when the mode is unconfined or the provider cannot confine ahead (the
 * caller then confines at once); `SANDBOX_REQUIRED` without a provider, as for a cold start.
 */
export function sandboxWrapper(boundary: ShellBoundary, cwd: string, readableFiles: readonly string[] = []): SpawnWrapper | undefined {
  const { mode, workspaceRoot, network, allowedHosts } = boundary.policy
  if (!isConfinedMode(mode)) return undefined
  const sandbox = readSandbox(boundary)
  if (!sandbox) throw shellFailure.sandboxRequired(mode)
  if (typeof sandbox.confineAhead !== 'function') return undefined
  const ahead = sandbox.confineAhead.bind(sandbox)
  return {
    // Everything of the request but the cwd, which the launcher inside is told with the program.
    key: JSON.stringify(['sandbox', mode, workspaceRoot, network ?? null, allowedHosts ?? null, readableFiles]),
    wrap: (argv) => confineShellArgv(argv, boundary, cwd, readableFiles),
    wrapAhead: async (argv): Promise<WrappedAhead | undefined> => {
      const started = await ahead(argv, sandboxRequest(mode, boundary, workspaceRoot, readableFiles))
      return started !== undefined && isCommand(started.argv) ? started : undefined
    },
  }
}

/**
 * What the shell's environment needs from the sandbox provider under a confined mode (the egress
 * proxy's variables under the `allowlist` network); nothing for `danger-full-access` or a provider
 * with nothing to add. The same for a cold and a warm start: it does not depend on the cwd.
 */
export function sandboxEnvironment(boundary: ShellBoundary, readableFiles: readonly string[] = []): Readonly<Record<string, string>> {
  const { mode, workspaceRoot } = boundary.policy
  if (!isConfinedMode(mode)) return {}
  const sandbox = readSandbox(boundary)
  if (typeof sandbox?.environment !== 'function') return {}
  return sandbox.environment(sandboxRequest(mode, boundary, workspaceRoot, readableFiles))
}

/** What the sandbox provider is asked for: the owner's mode, workspace and network, the cwd, the files to show. */
function sandboxRequest(mode: ConfinedMode, boundary: ShellBoundary, cwd: string, readableFiles: readonly string[]): SandboxPolicy {
  const { workspaceRoot, network, allowedHosts } = boundary.policy
  const request: SandboxPolicy = { mode, workspaceRoot, cwd }
  if (network !== undefined) request.network = network
  if (allowedHosts !== undefined) request.allowedHosts = [...allowedHosts]
  if (readableFiles.length > 0) request.readableFiles = [...readableFiles]
  return request
}

function readSandbox(boundary: ShellBoundary): Pick<Sandbox, 'confine' | 'confineAhead' | 'environment'> | undefined {
  try {
    return boundary.sandbox()
  } catch {
    // The context the provider was read from is gone (the plugin is unloading): there is none.
    return undefined
  }
}

function isCommand(value: unknown): value is string[] {
  return Array.isArray(value) && value.length > 0 && value.every((arg) => typeof arg === 'string') && value[0] !== ''
}

/**
 * A working directory as an absolute path that exists and is a directory, else `INVALID_CWD`;
 * a relative path resolves against the host's cwd. Symlinks are kept (the policy resolves them).
 */
export async function resolveWorkingDirectory(cwd: string | undefined): Promise<string> {
  if (cwd === '') throw shellFailure.emptyCwd()
  const path = resolve(process.cwd(), cwd ?? '.')
  let info
  try {
    info = await stat(path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw shellFailure.missingCwd(path)
    throw shellFailure.unreadableCwd(path, error)
  }
  if (!info.isDirectory()) throw shellFailure.notDirectory(path)
  return path
}
