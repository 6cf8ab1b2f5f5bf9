import type { Context } from '@deepseek-ai/cordis'
import type { z } from 'zod'
import { Config } from './config'
import { RecorderService } from './service'

export { type Asciicast, AsciicastError, type AsciicastEvent, type AsciicastHeader, EVENT_CODES, type EventCode, parseAsciicast } from './asciicast'
export { Config, DEFAULT_MAX_BYTES_PER_SESSION, DEFAULT_RETENTION_DAYS, MIN_MAX_BYTES_PER_SESSION, type RecorderConfig } from './config'
export { defaultRecordingDirectory, isRecordingName, RECORDING_EXTENSION, recordingFileName } from './directory'
export { RECORDER_ERROR_CODES, RecorderError, type RecorderErrorCode } from './errors'
export { type RecordedSend, recordedSends } from './markers'
export { REDACTED } from './redaction'
export { RECORDER_UNLOADED, RecorderService } from './service'
export { PERSON_INPUT_PLACEHOLDER, SECRET_INPUT_PLACEHOLDER } from './session-recording'

/** Plugin name used in a cordis.yml (the `record` entry). */
export const name = 'dsh-terminal-recorder'

/** It watches the sessions of `ctx.terminals`. */
export const inject = ['terminals']

/** Provide `ctx.recorder`: every session started from now on is recorded into the private directory. */
export async function apply(ctx: Context, config: z.input<typeof Config>): Promise<void> {
  // Awaited, so an unsafe directory (RECORD_DIR_UNSAFE) fails the entry instead of only being logged.
  await ctx.plugin(RecorderService, Config.parse(config))
}
