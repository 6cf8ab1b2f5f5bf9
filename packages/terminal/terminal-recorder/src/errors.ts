/** Every code a {@link RecorderError} carries. */
export const RECORDER_ERROR_CODES = ['RECORD_DIR_UNSAFE', 'NO_RECORDING'] as const

/** One of {@link RECORDER_ERROR_CODES}. */
export type RecorderErrorCode = (typeof RECORDER_ERROR_CODES)[number]

/**
 * Why the recorder refused: `RECORD_DIR_UNSAFE` (the directory is not a private directory of this
 * user), `NO_RECORDING` (no recording of that name in the directory).
 */
export class RecorderError extends Error {
  constructor(
    /** Stable code to branch on. */
    readonly code: RecorderErrorCode,
    message: string,
  ) {
    super(message)
    this.name = 'RecorderError'
  }
}
