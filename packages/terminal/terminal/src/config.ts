import { z } from 'zod'
import { MAX_TIMER_MS } from 'dsh-basics'
import { DEFAULT_HUMAN_ACTIVE_MS } from './human'

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
    humanActiveMs: z
      .number()
      .int('humanActiveMs must be an integer number of milliseconds')
      .min(0, 'humanActiveMs must be at least 0')
      .max(3_600_000, 'humanActiveMs must be at most 3600000 (an hour)')
      .default(DEFAULT_HUMAN_ACTIVE_MS)
      .describe(
        'After a person attached to a session (dsh-terminal attach, the web view) typed into it, agent sends are refused with HUMAN_ACTIVE for this long; 0 never refuses.',
      ),
    detachedTtlMs: z
      .number()
      .int('detachedTtlMs must be an integer number of milliseconds')
      .min(0, 'detachedTtlMs must be at least 0')
      .max(MAX_TIMER_MS, `detachedTtlMs must be at most ${MAX_TIMER_MS} ms`)
      .default(0)
      .describe(
        "How long an agent's sessions outlive its end (an MCP client that disconnected), detached: listed to every agent of this host and adopted with terminal_open resume; 0 closes them at once.",
      ),
  })
  .prefault({})

/** The resolved options the registry enforces. */
export type TerminalConfig = z.output<typeof Config>
