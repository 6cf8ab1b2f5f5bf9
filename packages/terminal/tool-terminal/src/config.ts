import { refineResultWindow, resolveResultWindow } from 'dsh-tools'
import { z } from 'zod'

/** Smallest accepted `maxResultBytes`: an open acknowledgement with its `pty-<n>` id still fits. */
export const MIN_RESULT_BYTES = 64

/** Largest accepted `maxResultBytes`: the cap is also a job's output bound, which dsh-jobs limits to 64 MiB. */
export const MAX_RESULT_BYTES = 64 * 1024 * 1024

/** Default `maxResultBytes` (256 KiB), the same as the shell backend's page bound. */
export const DEFAULT_RESULT_BYTES = 262_144

/** Default `backgroundTimeoutMs` (10 minutes). */
export const DEFAULT_BACKGROUND_TIMEOUT_MS = 600_000

/** Largest accepted `backgroundTimeoutMs` (24 hours; Node timers stop at 2³¹−1 ms anyway). */
export const MAX_BACKGROUND_TIMEOUT_MS = 86_400_000

/** Default `maxTimeoutMs` (10 minutes): how long one terminal_send may be asked to wait. */
export const DEFAULT_MAX_TIMEOUT_MS = 600_000

/** Largest accepted `maxTimeoutMs` (24 hours, like `backgroundTimeoutMs`). */
export const MAX_MAX_TIMEOUT_MS = 86_400_000

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
    defaultMaxBytes: z
      .number()
      .int('defaultMaxBytes must be an integer number of bytes')
      .min(MIN_RESULT_BYTES, `defaultMaxBytes must be at least ${MIN_RESULT_BYTES} bytes`)
      .max(MAX_RESULT_BYTES, `defaultMaxBytes must be at most ${MAX_RESULT_BYTES} bytes`)
      .optional()
      .describe(
        'The window of a terminal_send or terminal_read result when the call gives no maxBytes: longer output keeps its head and tail with one line naming the terminal_read call for the middle. At most maxResultBytes (default: maxResultBytes).',
      ),
    foldRepeatedLines: z
      .boolean()
      .default(true)
      .describe('Fold runs of identical lines in send and read results into one line plus `[… N more identical lines]` (the scrollback keeps every line).'),
    backgroundTimeoutMs: z
      .number()
      .int('backgroundTimeoutMs must be an integer number of milliseconds')
      .min(1000, 'backgroundTimeoutMs must be at least 1000 ms')
      .max(MAX_BACKGROUND_TIMEOUT_MS, `backgroundTimeoutMs must be at most ${MAX_BACKGROUND_TIMEOUT_MS} ms (24 hours)`)
      .default(DEFAULT_BACKGROUND_TIMEOUT_MS)
      .describe(
        'How long a background send may run: it does not end on silence, only when the shell or a program waits for input, the session exits, job_kill, or this timeout.',
      ),
    maxTimeoutMs: z
      .number()
      .int('maxTimeoutMs must be an integer number of milliseconds')
      .min(1000, 'maxTimeoutMs must be at least 1000 ms')
      .max(MAX_MAX_TIMEOUT_MS, `maxTimeoutMs must be at most ${MAX_MAX_TIMEOUT_MS} ms (24 hours)`)
      .default(DEFAULT_MAX_TIMEOUT_MS)
      .describe('Largest timeoutMs and idleMs a model may give terminal_send. A background send may ask for up to the larger of this and backgroundTimeoutMs.'),
  })
  .prefault({})
  .superRefine(refineResultWindow)
  .transform(resolveResultWindow)

/** The resolved options every tool factory receives. */
export type TerminalToolsConfig = z.output<typeof Config>
