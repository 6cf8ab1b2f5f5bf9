import { statSync } from 'node:fs'
import type { TerminalModes } from 'dsh-subprocess'
import { SttyHelper } from './stty-helper'
import { localFlagBits, parseSttySettings } from './stty-parser'

/** Reads a terminal's echo and canonical flags by device path; tests inject their own. */
export interface TerminalModesSource {
  /**
   * The flags of the terminal at `device`, or `undefined` when unreadable. `terminal`, when given,
   * is the device number the path must carry (checked first, so a stale path never answers).
   */
  read(device: string, terminal: number | undefined): Promise<TerminalModes | undefined>
  /** Release what the source holds (the helper process); later reads resolve `undefined`. */
  dispose(): void
}

/**
 * `stty -g` through one long-lived helper shell (see `SttyHelper`), decoded for this platform's
 * termios. Where the termios layout is unknown nothing is started and every read is `undefined`.
 */
export class SttyModes implements TerminalModesSource {
  readonly #bits: ReturnType<typeof localFlagBits>
  readonly #helper: SttyHelper | undefined

  constructor(platform: NodeJS.Platform = process.platform, arch: string = process.arch) {
    this.#bits = localFlagBits(platform, arch)
    // macOS: the system's BSD stty, whatever a package manager put first on PATH.
    this.#helper = this.#bits && new SttyHelper(platform === 'darwin' ? '-f' : '-F', { path: platform === 'darwin' ? '/bin:/usr/bin' : undefined })
  }

  async read(device: string, terminal: number | undefined): Promise<TerminalModes | undefined> {
    if (!this.#bits || !this.#helper) return undefined
    if (terminal !== undefined && deviceNumber(device) !== terminal) return undefined
    return parseSttySettings(await this.#helper.read(device), this.#bits)
  }

  dispose(): void {
    this.#helper?.dispose()
  }
}

function deviceNumber(path: string): number | undefined {
  try {
    return statSync(path).rdev
  } catch {
    return undefined
  }
}
