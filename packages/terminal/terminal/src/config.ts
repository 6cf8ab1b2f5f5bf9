import { z } from 'zod'

/** Default `maxSessionsPerAgent`: each session costs a PTY and a few processes, and one agent rarely needs more. */
export const DEFAULT_MAX_SESSIONS_PER_AGENT = 16

/** Default `maxTextBytes` (64 KiB): bash's readline takes under a second for one line that long. */
export const DEFAULT_MAX_TEXT_BYTES = 65_536

/** `dsh-terminal` options; every key is optional. Validated when the plugin is mounted. */
export const Config = z
  .object({
    maxSessionsPerAgent: z
      .number()
      .int('maxSessionsPerAgent must be an integer')
      .min(1, 'maxSessionsPerAgent must be at least 1')
      .default(DEFAULT_MAX_SESSIONS_PER_AGENT)
      .describe('Sessions one agent may hold at once, starting ones included; another open is refused with SESSION_LIMIT.'),
    maxTextBytes: z
      .number()
      .int('maxTextBytes must be an integer number of bytes')
      .min(1, 'maxTextBytes must be at least 1 byte')
      .default(DEFAULT_MAX_TEXT_BYTES)
      .describe('UTF-8 bytes of `text` one send may carry; a larger send is refused with TEXT_TOO_LARGE before anything is written.'),
  })
  .prefault({})

/** The resolved options the registry enforces. */
export type TerminalConfig = z.output<typeof Config>
