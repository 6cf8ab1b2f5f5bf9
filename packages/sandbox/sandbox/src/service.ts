import { type Context, Service } from '@deepseek-ai/cordis'
import type { SandboxPolicy } from './types'

declare module '@deepseek-ai/cordis' {
  interface Context {
    /** The sandbox provider of this context (e.g. plugin `dsh-sandbox-local`). */
    sandbox: Sandbox
  }
}

/**
 * `ctx.sandbox`: turns a command into one that runs confined. Exactly one provider per context
 * (a second one is refused by Cordis); consumers `inject: ['sandbox']` and never name the provider.
 */
export abstract class Sandbox extends Service {
  constructor(ctx: Context) {
    super(ctx, 'sandbox')
  }

  /**
   * Return the argv that runs `argv` under `policy`; spawn it exactly as given, with no further
   * wrapping. Async so a provider can probe its host once. Rejects with a `SandboxError` (fail
   * closed): never fall back to running the original argv.
   */
  abstract confine(argv: readonly string[], policy: SandboxPolicy): Promise<string[]>

  /**
   * Optional: confine `argv` ahead of need, for a launcher that is told its working directory later
   * (a warm sandbox). Resolves undefined when this start cannot be made ahead; a provider that never
   * can leaves the method out. Only `current()` says whether the start may still be used.
   */
  confineAhead?(argv: readonly string[], policy: SandboxPolicy): Promise<AheadConfinement | undefined>

  /**
   * Optional: variables a command confined under `policy` needs to use what the provider set up
   * for it (the `allowlist` network's proxy: `HTTPS_PROXY` and friends). The caller adds them to the
   * command's environment, over anything inherited; a provider with nothing to add leaves it out.
   */
  environment?(policy: SandboxPolicy): Readonly<Record<string, string>>
}

/**
 * A confinement made ahead of need: spawn `argv` now, use what it starts only while `current()`
 * holds (what `confine` would make now is the same sandbox), and drop it once `expired` aborts.
 */
export interface AheadConfinement {
  /** The argv to spawn, as `confine` returns it. */
  readonly argv: string[]
  /** Whether a sandbox started with `argv` still equals one `confine` would start now; cheap, synchronous. */
  current(): boolean
  /** Aborts when such a sandbox may never be used any more (the provider unloads). */
  readonly expired: AbortSignal
}
