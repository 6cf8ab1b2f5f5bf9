import { isIP } from 'node:net'
import { isAbsolute, normalize } from 'node:path'
import { z } from 'zod'
import { DEFAULT_HOME_FILES } from './private-home'

const noNul = (path: string) => !path.includes('\0')

/** `dsh-sandbox-local` configuration; every field is optional. */
export const Config = z
  .object({
    /** The bubblewrap binary: a name looked up on PATH, or a path. Resolved once by the probe. */
    bwrapPath: z.string().min(1, 'bwrapPath must not be empty').default('bwrap'),
    /**
     * What to do when the kernel still allows TIOCSTI terminal input injection
     * (`dev.tty.legacy_tiocsti=1`, or a kernel older than that knob): log a warning, or refuse to confine.
     */
    legacyTiocsti: z.enum(['warn', 'refuse']).default('warn'),
    /**
     * Keep the workspace's git hooks, config and their pointers read-only under `workspace-write`,
     * so a write there cannot run code outside the sandbox at the user's next git command.
     */
    protectGitMetadata: z.boolean().default(true),
    /** Keep the host's own installation read-only when it lies inside the workspace. */
    protectHostInstallation: z.boolean().default(true),
    /**
     * More paths that stay read-only inside a writable workspace: absolute, or relative to the
     * workspace root. Paths that do not exist when a session starts are skipped.
     */
    protectedPaths: z
      .array(
        z
          .string()
          .min(1, 'a protected path must not be empty')
          .refine((path) => !path.includes('\0'), 'a protected path must not contain NUL'),
      )
      .default([]),
    /**
     * Give every sandbox a writable home of its own at `$HOME` (kept per workspace under
     * workspace-write, a fresh tmpfs under read-only), so nothing it writes there reaches the real home.
     */
    privateHome: z.boolean().default(true),
    /** The user's dotfiles shown read-only in the private home, relative to `$HOME`; a credential among them is still hidden. */
    homeFiles: z
      .array(
        z
          .string()
          .min(1, 'a home file must not be empty')
          .refine(noNul, 'a home file must not contain NUL')
          .refine((path) => !isAbsolute(path) && !normalize(path).startsWith('..'), 'a home file is relative to $HOME and stays inside it, e.g. .vimrc'),
      )
      .default([...DEFAULT_HOME_FILES]),
    /**
     * Credentials to leave readable on purpose (read-only): absolute paths or `~/…`, e.g. `~/.ssh/known_hosts`
     * or `~/.npmrc`. Everything at or under a listed path is no longer masked.
     */
    readablePaths: z
      .array(
        z
          .string()
          .refine(noNul, 'a readable path must not contain NUL')
          .refine((path) => isAbsolute(path) || path === '~' || path.startsWith('~/'), 'a readable path is absolute or starts with ~/'),
      )
      .default([]),
    /** Where per-workspace private homes are kept; default `$XDG_STATE_HOME/dsh-terminal/homes` (`~/.local/state/…`). */
    homesDirectory: z
      .string()
      .refine((path) => isAbsolute(path) && noNul(path), 'homesDirectory must be an absolute path')
      .optional(),
    /**
     * Names the `allowlist` network's proxy resolves to fixed addresses before asking DNS, like an
     * /etc/hosts of its own (`{ "git.internal": "10.0.0.7" }`). It decides where a name goes, never whether.
     */
    egressAddresses: z
      .record(
        z.string().min(1, 'a name must not be empty'),
        z.string().refine((address) => isIP(address) !== 0, 'an egress address is an IPv4 or IPv6 address'),
      )
      .default({}),
  })
  .prefault({})

/** The validated configuration the provider runs with. */
export type LocalSandboxConfig = z.output<typeof Config>
