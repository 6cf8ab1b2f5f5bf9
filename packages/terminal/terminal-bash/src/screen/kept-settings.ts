import { Buffer } from 'node:buffer'

/** Longest title kept across a restart of the emulator; a longer one is not kept (the older one stays). */
export const MAX_KEPT_TITLE_BYTES = 4096

/** DEC private modes kept across a restart: the ones keys and pastes are encoded for. */
const KEPT_MODES = {
  /** DECCKM: application cursor keys. */
  1: 'applicationCursorKeys',
  /** DECNKM: application keypad, as `ESC =` sets it. */
  66: 'applicationKeypad',
  /** Bracketed paste. */
  2004: 'bracketedPaste',
} as const satisfies Record<number, keyof KeyModeFlags>

interface KeyModeFlags {
  applicationCursorKeys: boolean
  applicationKeypad: boolean
  bracketedPaste: boolean
}

/**
 * The settings a program made that outlive the output they came with: the window title and the
 * key modes. Recorded from every chunk (see `OutputWatch`), they let an emulator restarted on the
 * tail of dropped output (see `ScreenModel`) start where the terminal stands, not as a new one.
 */
export class KeptSettings {
  #title: string | undefined
  readonly #modes: KeyModeFlags = { applicationCursorKeys: false, applicationKeypad: false, bracketedPaste: false }

  /** The latest title (`OSC 0` or `OSC 2`), if one was set and not emptied. */
  get title(): string | undefined {
    return this.#title
  }

  /** An `OSC 0`/`OSC 2` payload ended: the title it sets (an empty one clears it). */
  setTitle(payload: Uint8Array): void {
    const title = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('utf8')
    this.#title = title === '' ? undefined : title
  }

  /** `CSI ? mode h` (`set`) or `l`: a kept mode changes; others are not kept. */
  setMode(mode: number, set: boolean): void {
    const name = KEPT_MODES[mode as keyof typeof KEPT_MODES]
    if (name) this.#modes[name] = set
  }

  /** `ESC =` (`set`) or `ESC >`: the keypad mode. */
  setKeypad(set: boolean): void {
    this.#modes.applicationKeypad = set
  }

  /** RIS (`ESC c`) or DECSTR (`CSI ! p`): every mode back to its default (the title stays, as in xterm). */
  resetModes(): void {
    this.#modes.applicationCursorKeys = false
    this.#modes.applicationKeypad = false
    this.#modes.bracketedPaste = false
  }

  /** Output that puts a new terminal into these settings. */
  preamble(): string {
    let output = ''
    for (const [mode, name] of Object.entries(KEPT_MODES)) if (this.#modes[name]) output += `\x1b[?${mode}h`
    if (this.#title !== undefined) output += `\x1b]2;${this.#title}\x07`
    return output
  }
}
