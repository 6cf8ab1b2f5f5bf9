import type { TerminalModes } from 'dsh-subprocess'
import { deviceNumber, type TerminalModesSource } from './modes-source'
import { modesPlan } from './modes-plan'
import { PerlTermiosHelper } from './perl-termios-helper'
import { SttyModes } from './stty-modes'

/** Unanswered perl reads in a row after which perl is given up for this source's lifetime. */
const PERL_FAILURES = 3

/** Where a {@link TermiosModes} runs (tests: another platform's plan, a fake or missing perl, a short bound). */
export interface TermiosModesOptions {
  /** Platform whose plan applies (default: this host's). */
  readonly platform?: NodeJS.Platform
  /** CPU architecture, for the stty fallback's bit layout (default: this host's). */
  readonly arch?: string
  /** The perl to run instead of the plan's. */
  readonly perl?: string
  /** Longest wait for one perl reply (default 2000 ms). */
  readonly replyTimeoutMs?: number
}

/**
 * The runtime's default flags source: `tcgetattr` in one long-lived perl (`PerlTermiosHelper`, no
 * fork per read), and `stty -g` in one long-lived shell (`SttyModes`) where that perl is missing or
 * fails. The choice is automatic and silent: a perl that cannot start or does not greet is never
 * tried again; a read perl leaves unanswered (it died or hung, and is replaced) is answered by stty
 * instead, and after {@link PERL_FAILURES} of those in a row perl is given up. A reply that the
 * device is no terminal is final (stty would find the same). Each helper starts on first use.
 */
export class TermiosModes implements TerminalModesSource {
  readonly #perl: PerlTermiosHelper | undefined
  readonly #stty: SttyModes
  #failures = 0
  #disposed = false

  /** Nothing starts until the first read. */
  constructor(options: TermiosModesOptions = {}) {
    const platform = options.platform ?? process.platform
    const arch = options.arch ?? process.arch
    const plan = modesPlan(platform, arch)
    this.#perl = plan && new PerlTermiosHelper({ perl: options.perl ?? plan.perl.file, path: plan.perl.path, replyTimeoutMs: options.replyTimeoutMs })
    this.#stty = new SttyModes(platform, arch)
  }

  /** Which helper the next read goes through; `undefined` where nothing is read (unknown platform, disposed). */
  get via(): 'perl' | 'stty' | undefined {
    if (this.#disposed || !this.#perl) return undefined
    return this.#perlUsable() ? 'perl' : 'stty'
  }

  /** Pids of the helpers running now (diagnostics and tests). */
  get pids(): number[] {
    return [this.#perl?.pid, this.#stty.pid].filter((pid) => pid !== undefined)
  }

  async read(device: string, terminal: number | undefined): Promise<TerminalModes | undefined> {
    if (this.#disposed || !this.#perl || device.includes('\n')) return undefined
    if (terminal !== undefined && deviceNumber(device) !== terminal) return undefined
    if (this.#perlUsable()) {
      const reply = await this.#perl.read(device)
      if (reply !== undefined) {
        this.#failures = 0
        return reply === 'unreadable' ? undefined : reply
      }
      if (this.#disposed) return undefined
      if (++this.#failures >= PERL_FAILURES) this.#perl.dispose()
    }
    return this.#stty.read(device, terminal)
  }

  dispose(): Promise<void> {
    this.#disposed = true
    return Promise.all([this.#perl?.dispose(), this.#stty.dispose()]).then(() => undefined)
  }

  #perlUsable(): boolean {
    return this.#perl !== undefined && this.#perl.available && this.#failures < PERL_FAILURES
  }
}
