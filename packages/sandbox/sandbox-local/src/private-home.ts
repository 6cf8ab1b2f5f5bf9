import { createHash } from 'node:crypto'
import { closeSync, constants, lstatSync, mkdirSync, openSync, realpathSync, writeSync } from 'node:fs'
import { basename, isAbsolute, join } from 'node:path'
import { errorMessage } from 'dsh-basics'
import { isWithin, SandboxError } from 'dsh-sandbox'
import type { PrivateHome, ReadOnlyBind } from './args'

/*
 * A read-only `$HOME` breaks the most common tools (vim's viminfo, git config --global, npm and
 * pip caches, shell history), and the real home holds the user's credentials. So a sandbox gets a
 * home of its own at the same path: under workspace-write one directory per workspace, kept in
 * the host user's state directory so caches, history and `pip install --user` survive the next
 * session. A read-only session gets a home of its own too (another directory per workspace), so
 * nothing it leaves there reaches a session that may write the workspace. Only the dotfiles listed
 * in the config are shown, read-only; `~/.gitconfig` is included from a writable one instead, so
 * `git config --global` works (see {@link GIT_CONFIG_INCLUDE}).
 */

/** Where the real `~/.gitconfig` is shown read-only, relative to the home; the private `~/.gitconfig` includes it. */
export const HOST_GITCONFIG = '.config/dsh-terminal/host.gitconfig'

/** What a new private home's `~/.gitconfig` holds when the user has one: their settings, then whatever a session sets. */
export const GIT_CONFIG_INCLUDE = `# dsh-terminal: your own ~/.gitconfig is included read-only; what a session sets here stays in its private home\n[include]\n\tpath = ~/${HOST_GITCONFIG}\n`

/** The dotfiles a private home shows read-only by default: shell, editor and git settings, and toolchains that live in `$HOME`. */
export const DEFAULT_HOME_FILES: readonly string[] = [
  '.profile',
  '.bashrc',
  '.bash_profile',
  '.bash_login',
  '.bash_logout',
  '.bash_aliases',
  '.inputrc',
  '.dircolors',
  '.gitconfig',
  '.config/git',
  '.vimrc',
  '.vim',
  '.config/nvim',
  '.nanorc',
  '.tmux.conf',
  '.editorconfig',
  '.gdbinit',
  '.selected_editor',
  '.cargo/bin',
  '.rustup',
  '.nvm',
  '.pyenv',
]

/** The host user's home as a canonical directory, or undefined when there is none to replace (unset, relative, `/`, missing). */
export function canonicalHome(home: string | undefined): string | undefined {
  if (!home || !isAbsolute(home)) return undefined
  try {
    const real = realpathSync.native(home)
    return real !== '/' && lstatSync(real).isDirectory() ? real : undefined
  } catch {
    return undefined
  }
}

/**
 * Where the per-workspace homes live: the configured directory, else
 * `$XDG_STATE_HOME/dsh-terminal/homes`, else `<home>/.local/state/dsh-terminal/homes`.
 */
export function homesDirectory(configured: string | undefined, home: string, env: NodeJS.ProcessEnv = process.env): string {
  if (configured !== undefined) return configured
  const state = env.XDG_STATE_HOME && isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : join(home, '.local', 'state')
  return join(state, 'dsh-terminal', 'homes')
}

/**
 * The private home's directory name for a canonical workspace and a mode: the workspace's base name
 * (for people), a hash of the whole path (unique), and `-read-only` for read-only sessions.
 */
export function workspaceHomeName(workspaceRoot: string, writable: boolean): string {
  const hash = createHash('sha256').update(workspaceRoot).digest('hex').slice(0, 16)
  const name = basename(workspaceRoot).replace(/[^A-Za-z0-9._-]/g, '_') || 'root'
  return `${name}-${hash}${writable ? '' : '-read-only'}`
}

/**
 * Create (mode 0700) or reuse `directory` and return its canonical path. It must be a directory of
 * this uid that nobody else may write: else SANDBOX_UNAVAILABLE, since it becomes a writable home.
 */
export function ensurePrivateDirectory(directory: string, uid: number | undefined = process.getuid?.()): string {
  let real: string
  try {
    mkdirSync(directory, { recursive: true, mode: 0o700 })
    real = realpathSync.native(directory)
  } catch (error) {
    throw new SandboxError(
      'SANDBOX_UNAVAILABLE',
      `cannot create the private home ${directory} (${errorMessage(error)}); set homesDirectory in dsh-sandbox-local's config to a writable directory, or privateHome: false`,
      { cause: error },
    )
  }
  const stat = lstatSync(real)
  if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid) || (stat.mode & 0o022) !== 0) {
    throw new SandboxError(
      'SANDBOX_UNAVAILABLE',
      `the private home ${real} is not a directory of this user closed to others; delete it (it is recreated) or set homesDirectory`,
    )
  }
  return real
}

/** What decides a session's home. */
export interface HomeRequest {
  /** The host user's canonical home (see {@link canonicalHome}); undefined: no private home. */
  readonly home: string | undefined
  readonly workspaceRoot: string
  /** Whether the session may write its workspace: read-only sessions get a home of their own. */
  readonly writable: boolean
  /** The dotfiles to show, relative to the home. */
  readonly files: readonly string[]
  /** Where per-workspace homes are kept (see {@link homesDirectory}). */
  readonly homes: string
}

/**
 * The session's private home, or undefined when the home is the workspace or lies inside the bound
 * workspace (the user chose it as the place to work), or there is no home. Creates the directory
 * (and its `~/.gitconfig` including the user's) on first use.
 */
export function planPrivateHome(request: HomeRequest): PrivateHome | undefined {
  const { home, workspaceRoot, writable } = request
  if (home === undefined) return undefined
  const workspaceBound = writable || workspaceRoot !== '/'
  if (workspaceBound && isWithin(workspaceRoot, home)) return undefined
  const source = ensurePrivateDirectory(join(request.homes, workspaceHomeName(workspaceRoot, writable)))
  const files = homeFileBinds(home, request.files)
  if (files.some((file) => file.destination === join(home, HOST_GITCONFIG))) createOnce(join(source, '.gitconfig'), GIT_CONFIG_INCLUDE)
  return { path: home, source, files }
}

/**
 * Write `content` to a new file, or leave an existing one (a session may have changed it) alone. It
 * never follows a link a session planted there: O_EXCL refuses any existing name, links included.
 */
function createOnce(path: string, content: string): void {
  let fd: number
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return
    throw error
  }
  try {
    writeSync(fd, content)
  } finally {
    closeSync(fd)
  }
}

/** Each listed dotfile that exists in the real home, from its canonical path (a dotfile may be a link into a dotfiles repository). */
export function homeFileBinds(home: string, files: readonly string[]): ReadOnlyBind[] {
  const binds: ReadOnlyBind[] = []
  for (const file of new Set(files)) {
    // The real ~/.gitconfig is included by the private one, which `git config --global` can write.
    const destination = join(home, file === '.gitconfig' ? HOST_GITCONFIG : file)
    const shown = join(home, file)
    if (!isWithin(home, shown) || shown === home) continue
    try {
      binds.push({ source: realpathSync.native(shown), destination })
    } catch {
      // Not there (or a dangling link): nothing to show.
    }
  }
  // Parents before children: `.config/nvim` must land on top of a listed `.config`, not under it.
  return binds.sort((a, b) => a.destination.split('/').length - b.destination.split('/').length)
}
