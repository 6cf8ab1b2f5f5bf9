import type { Sandbox } from 'dsh-sandbox'
import type { SandboxPolicyService } from 'dsh-sandbox-policy'
import type { SubprocessRuntime, TerminalLimits } from 'dsh-subprocess'
import { type TerminalBackend, TerminalBackendCleanupError, type TerminalBackendSpawnSpec, type TerminalSessionService } from 'dsh-terminal'
import type { ShellBackendConfig } from './config'
import { createPromptNonce } from './prompt-protocol'
import { fenceOwner } from './sandbox/mode-fence'
import { ShellSession } from './session/shell-session'
import { LinkedShellSession } from './session/linked-session'
import { durableShell, durableSpec } from './session/durable-shell'
import { resolveShellLaunch } from './shell-launch'

/** Backend type under which the shell registers on `ctx.terminals`. */
export const SHELL_BACKEND_TYPE = 'shell'

/** Reason given to a session closed because its own startup failed or was cancelled. */
export const STARTUP_ROLLBACK_REASON = 'PTY shell startup failed'

/** What the backend needs: the mounted providers, the sandbox policy and the validated config. */
export interface ShellBackendOptions {
  /** Allocates terminals (`ctx.subprocess`). */
  readonly subprocess: Pick<SubprocessRuntime, 'spawnTerminal' | 'listDetached' | 'adoptTerminal' | 'unreachableTargets'>
  /** Validated plugin configuration. */
  readonly config: ShellBackendConfig
  /** The owner's sandbox mode, the workspace root, cwd rules and the mode-change fence (`ctx.sandboxPolicy`). */
  readonly sandboxPolicy: Pick<SandboxPolicyService, 'resolve' | 'resolveCwd' | 'onModeChange'>
  /** The registry the sessions live in (`ctx.terminals`): the fence asks it whether an owner has activity. */
  readonly terminals: Pick<TerminalSessionService, 'hasOwnerActivity'>
  /**
   * Reads the sandbox provider of the same context at spawn (`() => ctx.get('sandbox')`); only a
   * confined mode needs one. Omitted means none is mounted.
   */
  readonly sandbox?: () => Pick<Sandbox, 'confine' | 'confineAhead'> | undefined
}

/**
 * The `shell` backend: starts a controlled bash in a PTY, inside the owner's sandbox, and waits
 * until it is ready. A failed or cancelled startup tears the private session down before
 * rejecting, so nothing leaks.
 */
export class ShellBackend implements TerminalBackend {
  /** Always `shell`. */
  readonly type = SHELL_BACKEND_TYPE
  readonly #options: ShellBackendOptions

  /** Present when the provider keeps terminals beyond this process (see {@link durableShell}). */
  readonly listDetached?: TerminalBackend['listDetached']
  /** Present with {@link ShellBackend.listDetached}. */
  readonly resume?: TerminalBackend['resume']
  /** Present with {@link ShellBackend.listDetached}: the provider's targets its last listing could not ask. */
  readonly unreachableTargets?: TerminalBackend['unreachableTargets']

  /** Binds the backend to a provider and a config. */
  constructor(options: ShellBackendOptions) {
    this.#options = options
    const durable = durableShell({ ...options, fence: (owner) => fenceOwner(options.sandboxPolicy, options.terminals, owner) })
    if (durable) {
      this.listDetached = () => durable.list()
      this.resume = (spec) => durable.resume(spec)
      this.unreachableTargets = () => durable.unreachable()
    }
  }

  /**
   * Fence the owner's sandbox mode, resolve its policy once, resolve the cwd and the (confined)
   * argv, spawn the shell (of `spec.size`, else the configured size) and run startup. Cancellation rejects with exactly `spec.signal.reason`;
   * a rollback that itself fails rejects with `TerminalBackendCleanupError`.
   */
  async spawn(spec: TerminalBackendSpawnSpec): Promise<ShellSession> {
    const { config, subprocess, sandboxPolicy, terminals, sandbox } = this.#options
    const { signal, owner } = spec
    signal.throwIfAborted()
    // Synchronously, before anything is awaited: this spawn is already the owner's activity, so
    // from here on no mode change can commit until the session is closed.
    fenceOwner(sandboxPolicy, terminals, owner)
    const policy = sandboxPolicy.resolve(owner)
    const nonce = createPromptNonce()
    const launch = await resolveShellLaunch(
      config,
      { sessionId: spec.sessionId, ownerId: owner.id, cwd: spec.cwd, nonce, replNonce: createPromptNonce(), target: spec.target },
      { policy, resolveCwd: (resolved, cwd) => sandboxPolicy.resolveCwd(resolved, cwd), sandbox: sandbox ?? noSandbox },
    )
    signal.throwIfAborted()
    // The registry checked a requested size against dsh-terminal's bounds; the config's default is in them too.
    const size = spec.size ?? { rows: config.rows, cols: config.cols }
    let handle
    try {
      handle = await subprocess.spawnTerminal({
        argv: launch.argv,
        cwd: launch.cwd,
        env: launch.env,
        rows: size.rows,
        cols: size.cols,
        graceMs: config.disposeGraceMs,
        signal,
        limits: sessionLimits(config),
        ...(launch.wrapper ? { wrapper: launch.wrapper } : {}),
        ...(launch.envFiles ? { envFiles: launch.envFiles } : {}),
        ...(spec.target === undefined ? {} : { target: spec.target }),
        ...durableSpec(subprocess, spec, config),
      })
    } catch (error) {
      if (signal.aborted) throw signal.reason
      throw error
    }
    // Only a terminal whose link can be lost pays for the watch on every send.
    const Session = handle.onLinkLost ? LinkedShellSession : ShellSession
    const session = new Session(handle, config, { nonce, replNonce: launch.replNonce }, size, {
      observe: spec.onOutput,
      term: launch.env.TERM,
      name: spec.name,
      target: spec.target,
    })
    try {
      await session.startup(signal)
      return session
    } catch (error) {
      const failure = signal.aborted ? signal.reason : error
      try {
        await session.close(STARTUP_ROLLBACK_REASON)
      } catch (cleanupError) {
        throw new TerminalBackendCleanupError(failure, cleanupError)
      }
      throw failure
    }
  }
}

/** The configured caps as the provider takes them: 0 means no cap, so the field is left out. */
export function sessionLimits(config: Pick<ShellBackendConfig, 'maxProcesses' | 'maxMemoryBytes'>): TerminalLimits | undefined {
  const limits = {
    ...(config.maxProcesses > 0 ? { maxProcesses: config.maxProcesses } : {}),
    ...(config.maxMemoryBytes > 0 ? { maxMemoryBytes: config.maxMemoryBytes } : {}),
  }
  return Object.keys(limits).length > 0 ? limits : undefined
}

function noSandbox(): undefined {
  return undefined
}
