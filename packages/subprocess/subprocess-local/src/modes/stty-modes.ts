import type { TerminalModes } from 'dsh-subprocess'
import { deviceNumber, type TerminalModesSource } from './modes-source'
import { modesPlan } from './modes-plan'
import { SttyHelper } from './stty-helper'
import { type LocalFlagBits, parseSttySettings } from './stty-parser'

/**
 * `stty -g` through one long-lived helper shell (see `SttyHelper`), decoded for this platform's
 * termios: about 2 ms a read, for the fork and exec of stty. The fallback of `TermiosModes`.
 * Where the termios layout is unknown nothing is started and every read is `undefined`.
 */
export class SttyModes implements TerminalModesSource {
  readonly #bits: LocalFlagBits | undefined
  readonly #helper: SttyHelper | undefined

  /** Nothing starts until the first read. */
  constructor(platform: NodeJS.Platform = process.platform, arch: string = process.arch) {
    const plan = modesPlan(platform, arch)
    this.#bits = plan?.bits
    this.#helper = plan && new SttyHelper(plan.stty.deviceOption, { path: plan.stty.path })
  }

  /** Pid of the running helper shell, if one runs (diagnostics and tests). */
  get pid(): number | undefined {
    return this.#helper?.pid
  }

  async read(device: string, terminal: number | undefined): Promise<TerminalModes | undefined> {
    if (!this.#bits || !this.#helper) return undefined
    if (terminal !== undefined && deviceNumber(device) !== terminal) return undefined
    return parseSttySettings(await this.#helper.read(device), this.#bits)
  }

  dispose(): Promise<void> {
    return this.#helper?.dispose() ?? Promise.resolve()
  }
}
