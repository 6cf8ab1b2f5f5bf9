import { z } from 'zod'

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
  })
  .prefault({})

/** The validated configuration the provider runs with. */
export type LocalSandboxConfig = z.output<typeof Config>
