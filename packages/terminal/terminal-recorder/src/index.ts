import type { Context } from '@deepseek-ai/cordis'
import type { z } from 'zod'
import { Config } from './config'
import { RecorderService } from './service'

export { type Asciicast, AsciicastError, type AsciicastEvent, parseAsciicast } from './asciicast'
export { Config } from './config'
export { RecorderError, type RecorderErrorCode } from './errors'
export { type RecordedSend, recordedSends } from './markers'
export { RecorderService } from './service'

/** Plugin name used in a cordis.yml (the `record` entry). */
export const name = 'dsh-terminal-recorder'

/** It watches the sessions of `ctx.terminals`. */
export const inject = ['terminals']

/** Provide `ctx.recorder`: every session started from now on is recorded into the private directory. */
export async function apply(ctx: Context, config: z.input<typeof Config>): Promise<void> {
  // Awaited, so an unsafe directory (RECORD_DIR_UNSAFE) fails the entry instead of only being logged.
  await ctx.plugin(RecorderService, Config.parse(config))
}
