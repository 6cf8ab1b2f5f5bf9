import { EnvAllowSchema } from 'dsh-subprocess'
import { z } from 'zod'
import { MAX_TIMER_MS } from 'dsh-basics'

/** Configuration of the local provider (`dsh-subprocess-local`); every field has a default. */
export const Config = z
  .object({
    /** Output held for the first `onOutput` subscriber before the PTY is paused (back-pressure, no loss). */
    backlogBytes: z
      .number()
      .int()
      .min(1)
      .max(1024 * 1024 * 1024)
      .default(8 * 1024 * 1024),
    /** How long SIGKILLed processes get to leave the process table before teardown reports them. */
    killWaitMs: z.number().int().min(1).max(MAX_TIMER_MS).default(2000),
    /** SIGKILL every managed process tree synchronously when the host process exits. */
    exitCleanup: z.boolean().default(true),
    /**
     * Keep two launchers per set of limits joined to fresh sessions' cgroups and waiting, so a
     * limited spawn does not wait for the kernel's join; `false` joins at each spawn.
     */
    warmLaunch: z.boolean().default(true),
    /**
     * Inherited names let through the environment scrub as they are (exact, case-sensitive). Never
     * `DSH_*`: the harness's own namespace reaches a terminal only through `spec.env`.
     */
    envAllow: EnvAllowSchema,
  })
  .prefault({})

/** Parsed configuration. */
export type LocalSubprocessConfig = z.output<typeof Config>
