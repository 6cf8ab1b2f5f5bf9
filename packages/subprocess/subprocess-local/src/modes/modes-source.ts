import { statSync } from 'node:fs'
import type { TerminalModes } from 'dsh-subprocess'

/** Reads a terminal's echo and canonical flags by device path; tests inject their own. */
export interface TerminalModesSource {
  /**
   * The flags of the terminal at `device`, or `undefined` when unreadable. `terminal`, when given,
   * is the device number the path must carry (checked first, so a stale path never answers).
   */
  read(device: string, terminal: number | undefined): Promise<TerminalModes | undefined>
  /** Release what the source holds (helper processes); later reads resolve `undefined`. */
  dispose(): void | Promise<void>
}

/** The device number of the file at `path` (`st_rdev`), or `undefined` when it cannot be stat'ed. */
export function deviceNumber(path: string): number | undefined {
  try {
    return statSync(path).rdev
  } catch {
    return undefined
  }
}
