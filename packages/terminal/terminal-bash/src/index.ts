import type { Context } from '@deepseek-ai/cordis'
import type { Sandbox } from 'dsh-sandbox'
import type {} from 'dsh-sandbox-policy'
import type {} from 'dsh-subprocess'
import type {} from 'dsh-terminal'
import { ShellBackend } from './backend'
import { parseConfig, type ShellBackendConfigInput } from './config'
import { fenceAllOwners } from './sandbox/mode-fence'

export { SHELL_BACKEND_TYPE } from './backend'
export { Config, type ShellBackendConfig, type ShellBackendConfigInput } from './config'
export {
  isShellBackendError,
  SHELL_BACKEND_ERROR_CODES,
  ShellBackendError,
  type ShellBackendErrorCode,
} from './errors'

/** Plugin name used in a cordis.yml. */
export const name = 'dsh-terminal-bash'

/**
 * The backend registers on `ctx.terminals`, allocates PTYs through `ctx.subprocess` and starts every
 * shell under the owner's `ctx.sandboxPolicy`. `ctx.sandbox` is optional: it is read at spawn, and
 * only a confined mode needs it.
 */
export const inject = ['terminals', 'subprocess', 'sandboxPolicy']

/**
 * Register the `shell` backend and the all-owner mode fence; both go when this plugin unloads
 * (sessions stay with `ctx.terminals`, and their owner-bound fences with `ctx.sandboxPolicy`).
 */
export function apply(ctx: Context, input: ShellBackendConfigInput): void {
  const config = parseConfig(input)
  // Capture the services, not this context: the owner-bound fences outlive this plugin.
  const terminals = ctx.terminals
  const sandboxPolicy = ctx.sandboxPolicy
  fenceAllOwners(sandboxPolicy, terminals)
  const sandbox = () => ctx.get('sandbox') as Sandbox | undefined
  terminals.registerBackend(new ShellBackend({ subprocess: ctx.subprocess, config, sandboxPolicy, terminals, sandbox }))
}
