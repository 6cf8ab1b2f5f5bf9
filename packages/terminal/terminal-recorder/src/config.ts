import { z } from 'zod'

/** Default `maxBytesPerSession` (64 MiB): a long day of ordinary output; a flood stops early with a marker. */
export const DEFAULT_MAX_BYTES_PER_SESSION = 64 * 1024 * 1024

/** Default `retentionDays`: recordings older than two weeks are removed. */
export const DEFAULT_RETENTION_DAYS = 14

/** Smallest `maxBytesPerSession`: a header, a few events and the stop marker. */
export const MIN_MAX_BYTES_PER_SESSION = 4096

/** `dsh-terminal-recorder` options (the composition's `record` entry); every key is optional. */
export const Config = z
  .object({
    dir: z
      .string()
      .default('')
      .describe('Where recordings go (created 0700); empty: $XDG_STATE_HOME/dsh-terminal/recordings, else ~/.local/state/dsh-terminal/recordings.'),
    maxBytesPerSession: z
      .number()
      .int('maxBytesPerSession must be an integer')
      .min(MIN_MAX_BYTES_PER_SESSION, `maxBytesPerSession must be at least ${MIN_MAX_BYTES_PER_SESSION}`)
      .default(DEFAULT_MAX_BYTES_PER_SESSION)
      .describe('The most bytes one recording file holds; past it a marker says the recording stopped.'),
    retentionDays: z
      .number()
      .min(0, 'retentionDays must be 0 (keep forever) or more')
      .default(DEFAULT_RETENTION_DAYS)
      .describe('Recordings last written longer ago are removed at start and every hour; 0 keeps them.'),
  })
  .prefault({})

/** The validated options. */
export type RecorderConfig = z.output<typeof Config>
