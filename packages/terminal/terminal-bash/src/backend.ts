import type { SubprocessRuntime } from 'dsh-subprocess'
import { type TerminalBackend, TerminalBackendCleanupError, type TerminalBackendSpawnSpec } from 'dsh-terminal'
import type { ShellBackendConfig } from './config'
import { ShellSession } from './session/shell-session'
import { createPromptNonce } from './prompt-protocol'
import { resolveShellLaunch } from './shell-launch'

/** Backend type under which the shell registers on `ctx.terminals`. */
export const SHELL_BACKEND_TYPE = 'shell'

/** Reason given to a session closed because its own startup failed or was cancelled. */
export const STARTUP_ROLLBACK_REASON = 'PTY shell startup failed'

/** What the backend needs: the mounted subprocess provider and the validated config. */
export interface ShellBackendOptions {
  /** Allocates terminals (`ctx.subprocess`). */
  readonly subprocess: Pick<SubprocessRuntime, 'spawnTerminal'>
  /** Validated plugin configuration. */
  readonly config: ShellBackendConfig
}

/**
 * The `shell` backend: starts a controlled bash in a PTY and waits until it is ready. A failed or
 * cancelled startup tears the private session down before rejecting, so nothing leaks.
 */
export class ShellBackend implements TerminalBackend {
  /** Always `shell`. */
  readonly type = SHELL_BACKEND_TYPE
  readonly #options: ShellBackendOptions

  /** Binds the backend to a provider and a config. */
  constructor(options: ShellBackendOptions) {
    this.#options = options
  }

  /**
   * Validate the cwd, spawn the shell and run startup. Cancellation rejects with exactly
   * `spec.signal.reason`; a rollback that itself fails rejects with `TerminalBackendCleanupError`.
   */
  async spawn(spec: TerminalBackendSpawnSpec): Promise<ShellSession> {
    const { config, subprocess } = this.#options
    const { signal } = spec
    signal.throwIfAborted()
    const nonce = createPromptNonce()
    const launch = await resolveShellLaunch(config, { sessionId: spec.sessionId, ownerId: spec.owner.id, cwd: spec.cwd, nonce })
    signal.throwIfAborted()
    let handle
    try {
      handle = await subprocess.spawnTerminal({
        argv: launch.argv,
        cwd: launch.cwd,
        env: launch.env,
        rows: config.rows,
        cols: config.cols,
        graceMs: config.disposeGraceMs,
        signal,
      })
    } catch (error) {
      if (signal.aborted) throw signal.reason
      throw error
    }
    const session = new ShellSession(handle, config, nonce)
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
