import { type Context, Service } from '@deepseek-ai/cordis'
import type { AdoptedTerminal, DetachedTerminal, SubprocessTerminalHandle, TerminalSpawnSpec, UnreachableTarget } from './types'

declare module '@deepseek-ai/cordis' {
  interface Context {
    /** The mounted subprocess provider (for example plugin `dsh-subprocess-local`). */
    subprocess: SubprocessRuntime
  }
}

/**
 * `ctx.subprocess`: the one seam through which terminals are allocated, so a remote or sandboxed
 * execution world can replace the local one without touching its consumers. Providers extend this
 * class; only one can be mounted per context (Cordis refuses a second `subprocess` service).
 */
export abstract class SubprocessRuntime extends Service {
  constructor(ctx: Context) {
    super(ctx, 'subprocess')
  }

  /**
   * Allocate a PTY and start `spec.argv` in it with the scrubbed environment plus `spec.env`.
   * Rejects with a `SubprocessError` (`INVALID_SPEC`, `UNSUPPORTED_PLATFORM`, `SPAWN_ABORTED`,
   * `SPAWN_FAILED`) without leaving a process behind.
   */
  abstract spawnTerminal(spec: TerminalSpawnSpec): Promise<SubprocessTerminalHandle>

  /**
   * Durable terminals of this OS user that no client holds now. Only a provider whose terminals
   * outlive their client (dsh-subprocess-remote) has it; the registry then offers them for adoption.
   */
  listDetached?(): Promise<readonly DetachedTerminal[]>

  /**
   * The targets the last {@link SubprocessRuntime.listDetached} left out because they did not answer
   * in time (empty when every one did), so a listing can say which machines it could not see.
   */
  unreachableTargets?(): readonly UnreachableTarget[]

  /**
   * Take over a detached durable terminal by its key, on `target` (default: the provider's default
   * target). Rejects with `TERMINAL_ADOPTED` when another client adopted it first,
   * `TERMINAL_NOT_FOUND` when none is detached under that key, `UNKNOWN_TARGET` for a name it lacks.
   */
  adoptTerminal?(key: string, target?: string): Promise<AdoptedTerminal>

  /**
   * The targets a spawn may name (`spec.target`), the default first. A provider without it runs
   * everything on this machine ({@link LOCAL_TARGET}).
   */
  targetNames?(): readonly string[]
}
