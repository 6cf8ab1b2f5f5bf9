import type { Context } from '@deepseek-ai/cordis'
import type { Sandbox } from 'dsh-sandbox'
import type {} from 'dsh-sandbox-policy'
import type {} from 'dsh-subprocess'
import type {} from 'dsh-terminal'
import { ShellBackend } from './backend'
import { parseConfig, type ShellBackendConfigInput } from './config'
import { fenceAllOwners } from './sandbox/mode-fence'

export { SHELL_BACKEND_TYPE, ShellBackend, type ShellBackendOptions, STARTUP_ROLLBACK_REASON } from './backend'
export { Config, DEFAULT_MAX_MEMORY_BYTES, MAX_TIMER_MS, parseConfig, type ShellBackendConfig, type ShellBackendConfigInput } from './config'
export {
  isShellBackendError,
  SHELL_BACKEND_ERROR_CODES,
  ShellBackendError,
  type ShellBackendErrorCode,
} from './errors'
export { confineShellArgv, resolveShellCwd, type ShellBoundary } from './sandbox/boundary'
export { fenceAllOwners, fenceOwner, MODE_FENCE_KEY, MODE_FENCE_MESSAGE } from './sandbox/mode-fence'
export { DEFAULT_READ_LINES } from './session/scrollback-page'
export { ShellSession } from './session/shell-session'
export { ScreenModel, type ScreenModelOptions } from './screen/screen-model'
export { DEFAULT_KEY_MODES, ENTER, type KeyModes, sendInput } from './input/send-input'
export {
  createPromptNonce,
  decodeMarkerStatus,
  NONCE_VARIABLE,
  SHELL_CONTINUATION_PROMPT,
  SHELL_PROMPT,
  SHELL_PROMPT_COMMAND,
} from './prompt-protocol'
export {
  DEFAULT_SHELL_ARGS,
  DEFAULT_SHELL_PATH,
  resolveShellLaunch,
  resolveWorkingDirectory,
  shellEnvironment,
  type ShellLaunch,
  type ShellLaunchRequest,
} from './shell-launch'

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
