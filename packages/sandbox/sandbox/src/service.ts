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
}
