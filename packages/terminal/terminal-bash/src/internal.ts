/**
 * The backend's parts, for this repository's tests and benchmarks: the backend and session classes,
 * the screen model, the send table (rendered for the readiness note), the prompt protocol, the shell launch, the sandbox boundary and the mode fences.
 * Not the plugin's API — mount the plugin from `dsh-terminal-bash` and open sessions through
 * `ctx.terminals`; these names may change in any release.
 */
export { ShellBackend, type ShellBackendOptions, STARTUP_ROLLBACK_REASON } from './backend'
export { DEFAULT_MAX_MEMORY_BYTES, parseConfig } from './config'
export { confineShellArgv, resolveShellCwd, type ShellBoundary } from './sandbox/boundary'
export { fenceAllOwners, fenceOwner, MODE_FENCE_KEY, MODE_FENCE_MESSAGE } from './sandbox/mode-fence'
export { DEFAULT_READ_LINES } from './session/scrollback-page'
export { renderSendTable } from './readiness/send-transitions'
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
