import type { Context } from '@deepseek-ai/cordis'
import type {} from 'dsh-subprocess'
import type {} from 'dsh-terminal'
import { ShellBackend } from './backend'
import { parseConfig, type ShellBackendConfigInput } from './config'

export { SHELL_BACKEND_TYPE, ShellBackend, type ShellBackendOptions, STARTUP_ROLLBACK_REASON } from './backend'
export { Config, MAX_TERMINAL_SIZE, MAX_TIMER_MS, parseConfig, type ShellBackendConfig, type ShellBackendConfigInput } from './config'
export {
  isShellBackendError,
  SHELL_BACKEND_ERROR_CODES,
  ShellBackendError,
  type ShellBackendErrorCode,
} from './errors'
// The phases a send goes through (for diagnostics of a live send).
export type { SendPhase } from './readiness/send-contract'
export { DEFAULT_READ_LINES, ENTER, ShellSession } from './session/shell-session'
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

/** The backend registers on `ctx.terminals` and allocates PTYs through `ctx.subprocess`. */
export const inject = ['terminals', 'subprocess']

/** Register the `shell` backend; it is unregistered when this plugin unloads (sessions stay with `ctx.terminals`). */
export function apply(ctx: Context, input: ShellBackendConfigInput): void {
  const config = parseConfig(input)
  ctx.terminals.registerBackend(new ShellBackend({ subprocess: ctx.subprocess, config }))
}
