import { z } from 'zod'

/** Smallest accepted `maxResultBytes`: an open acknowledgement with its `pty-<n>` id still fits. */
export const MIN_RESULT_BYTES = 64

/** Largest accepted `maxResultBytes`: the cap is also a job's output bound, which dsh-jobs limits to 64 MiB. */
export const MAX_RESULT_BYTES = 64 * 1024 * 1024

/** Default `maxResultBytes` (256 KiB), the same as the shell backend's page bound. */
export const DEFAULT_RESULT_BYTES = 262_144

/**
 * Options of `dsh-tool-terminal`. Validated by Cordis when the plugin is mounted, so a bad cap is a
 * config error at load time rather than a broken result later.
 */
export const Config = z
  .object({
    enableRunInBackground: z
      .boolean()
      .default(true)
      .describe('Offer `run_in_background` on terminal_send (needs ctx.jobs at call time). False removes it from the schema.'),
    maxResultBytes: z
      .number()
      .int('maxResultBytes must be an integer number of bytes')
      .min(MIN_RESULT_BYTES, `maxResultBytes must be at least ${MIN_RESULT_BYTES} bytes, so that results keep session ids and status lines`)
      .max(MAX_RESULT_BYTES, `maxResultBytes must be at most ${MAX_RESULT_BYTES} bytes (the background job output limit)`)
      .default(DEFAULT_RESULT_BYTES)
      .describe('UTF-8 byte cap of every single-text result of the six tools, errors and status lines included.'),
  })
  .prefault({})

/** The resolved options every tool factory receives. */
export type TerminalToolsConfig = z.output<typeof Config>
