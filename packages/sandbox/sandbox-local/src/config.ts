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
  })
  .prefault({})

/** The validated configuration the provider runs with. */
export type LocalSandboxConfig = z.output<typeof Config>
