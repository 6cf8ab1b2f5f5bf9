import type { ShellBackendConfig } from './config'
import { NONCE_VARIABLE, SHELL_CONTINUATION_PS2, SHELL_PROMPT, SHELL_PROMPT_COMMAND } from './prompt-protocol'
import { pythonStartupElsewhere, pythonStartupEnvironment, pythonStartupFile } from './repl/python-startup'
import { isAbsolute } from 'node:path'
import { isConfinedMode } from 'dsh-sandbox'
import { LOCAL_TARGET, type SpawnWrapper } from 'dsh-subprocess'
import { shellFailure } from './errors'
import { confineShellArgv, resolveShellCwd, sandboxEnvironment, sandboxWrapper, type ShellBoundary } from './sandbox/boundary'

export { resolveWorkingDirectory } from './sandbox/boundary'

/** Default executable of the bash dialect (resolved on the terminal's PATH by the provider). */
export const DEFAULT_SHELL_PATH = 'bash'

/** Default arguments of the bash dialect: no profile or rc files (they could replace the prompt), interactive. */
export const DEFAULT_SHELL_ARGS: readonly string[] = ['--noprofile', '--norc', '-i']

/** Who a shell is started for; the ids are exported to the shell so tools inside it can tell. */
export interface ShellLaunchRequest {
  /** Session id minted by `ctx.terminals`. */
  readonly sessionId: string
  /** Id of the owning agent. */
  readonly ownerId: string
  /** Requested working directory; default the workspace root, relative paths resolve against it. */
  readonly cwd?: string | undefined
  /** This session's marker nonce (see `createPromptNonce`). */
  readonly nonce: number
  /** The nonce a Python REPL of this session marks its prompts with (another number than `nonce`). */
  readonly replNonce?: number | undefined
  /** The subprocess target it starts on; absent or `local`: this machine. */
  readonly target?: string | undefined
}

/** Everything `spawnTerminal` needs besides size, grace and cancellation. */
export interface ShellLaunch {
  /**
   * Final argv: the shell and its arguments, wrapped once by the sandbox under a confined mode; with
   * a `wrapper`, the shell alone, which the subprocess provider runs inside it.
   */
  readonly argv: readonly string[]
  /** The sandbox as a spawn wrapper (confined modes with `warmSandbox`): the provider may have started it ahead. */
  readonly wrapper?: SpawnWrapper | undefined
  /** Canonical, existing working directory (inside the workspace under a confined mode). */
  readonly cwd: string
  /** Overrides applied on top of the provider's scrubbed inherited environment. */
  readonly env: Readonly<Record<string, string | undefined>>
  /** The REPL nonce in effect: set only when Python's prompts will be marked (see `python-startup.py`). */
  readonly replNonce?: number | undefined
  /** Files the provider writes where the shell runs, by the variable naming each (a target's Python startup file). */
  readonly envFiles?: Readonly<Record<string, string>> | undefined
}

/**
 * Resolve how one shell starts under `boundary`. This is the single place where the argv is
 * decided: the working directory is resolved by the policy, then the whole shell is wrapped once by
 * the sandbox (`danger-full-access`: not at all). Nothing else may build or wrap an argv.
 */
export async function resolveShellLaunch(config: ShellBackendConfig, request: ShellLaunchRequest, boundary: ShellBoundary): Promise<ShellLaunch> {
  const elsewhere = request.target !== undefined && request.target !== LOCAL_TARGET
  if (elsewhere) return elsewhereLaunch(config, request, boundary)
  const cwd = await resolveShellCwd(boundary, request.cwd)
  const shellPath = config.shellPath === '' ? DEFAULT_SHELL_PATH : config.shellPath
  const shellArgs = config.shellArgs.length === 0 ? DEFAULT_SHELL_ARGS : config.shellArgs
  // A sandbox may hide the package's files (its /tmp is private), and Python would then complain
  // at every start about a startup file it cannot open: the sandbox is asked to show it.
  const startup = request.replNonce !== undefined ? pythonStartupFile() : undefined
  const readable = startup ? [startup] : []
  const shell = [shellPath, ...shellArgs]
  // With a wrapper the sandbox is the provider's to start (ahead, or at spawn); else it is made here.
  const wrapper = config.warmSandbox ? sandboxWrapper(boundary, cwd, readable) : undefined
  const argv = wrapper ? shell : await confineShellArgv(shell, boundary, cwd, readable)
  // The sandbox's variables (its egress proxy) first: the session's own never give way to them.
  const env = { ...sandboxEnvironment(boundary, readable), ...shellEnvironment(request) }
  const wrapped = wrapper ? { wrapper } : {}
  if (!startup || request.replNonce === undefined) return { argv, cwd, env, ...wrapped }
  const python = pythonStartupEnvironment(startup, request.replNonce, process.env.PYTHONSTARTUP)
  return { argv, cwd, env: { ...env, ...python }, replNonce: request.replNonce, ...wrapped }
}

/**
 * A shell on another machine or in a container (a named target): this machine's sandbox cannot wrap
 * it (its argv names this machine's paths), so a confined mode is refused rather than dropped, and
 * the working directory is the target's, checked there (an absolute path; default `/`).
 */
function elsewhereLaunch(config: ShellBackendConfig, request: ShellLaunchRequest, boundary: ShellBoundary): ShellLaunch {
  const { mode } = boundary.policy
  if (isConfinedMode(mode)) throw shellFailure.confinedElsewhere(mode, request.target ?? '')
  const cwd = request.cwd ?? '/'
  if (!isAbsolute(cwd)) throw shellFailure.relativeCwdElsewhere(cwd, request.target ?? '')
  const shellPath = config.shellPath === '' ? DEFAULT_SHELL_PATH : config.shellPath
  const shellArgs = config.shellArgs.length === 0 ? DEFAULT_SHELL_ARGS : config.shellArgs
  const launch = { argv: [shellPath, ...shellArgs], cwd, env: shellEnvironment(request) }
  // The Python startup file's path is this machine's: its content travels, and the provider writes it there.
  const python = request.replNonce === undefined ? undefined : pythonStartupElsewhere(request.replNonce)
  if (!python) return launch
  return { ...launch, env: { ...launch.env, ...python.env }, envFiles: python.envFiles, replNonce: request.replNonce }
}

/**
 * Terminal-specific overrides. The provider already dropped credential-shaped and `DSH_*` names
 * from the inherited environment; these explicit values win over anything inherited. The session's
 * emulator answers terminal queries, so a real terminal type is advertised; pagers and editors
 * that git or man would open stay off unless asked for (`man -P less`, `less` itself work).
 */
export function shellEnvironment(request: Pick<ShellLaunchRequest, 'sessionId' | 'ownerId' | 'nonce'>): Record<string, string> {
  return {
    TERM: 'xterm-256color',
    PAGER: 'cat',
    GIT_PAGER: 'cat',
    MANPAGER: 'cat',
    GIT_EDITOR: ':',
    GIT_TERMINAL_PROMPT: '0',
    // An agent's commands do not belong in the user's ~/.bash_history, nor its node REPL input in
    // ~/.node_repl_history (under a confined mode node would also complain it cannot write there).
    HISTFILE: '',
    NODE_REPL_HISTORY: '',
    PS1: SHELL_PROMPT,
    PS2: SHELL_CONTINUATION_PS2,
    PROMPT_COMMAND: SHELL_PROMPT_COMMAND,
    [NONCE_VARIABLE]: String(request.nonce),
    DSH_TERMINAL_SESSION_ID: request.sessionId,
    DSH_TERMINAL_OWNER: request.ownerId,
  }
}
