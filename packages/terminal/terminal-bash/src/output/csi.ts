import type { TerminalLine } from './line'
import type { ScreenRows } from './screen-rows'
import type { TextBatch } from './text-batch'

/**
 * Collects the numeric parameters of one CSI sequence and applies the ones that edit a line: EL
 * (`K`), ECH (`X`), DCH (`P`), ICH (`@`), CHA/HPA (`G`, `` ` ``), CUF/HPR (`C`, `a`), CUB (`D`), and
 * the ones that say which row the cursor is on (CUP/HVP `H` `f`, VPA `d`, CUU `A`, CUD `B`, CNL `E`,
 * CPL `F`, ED `J`, DECSTBM `r`) for {@link ScreenRows}. Which byte is a digit, a separator or the final, and
 * which sequences are ignored, is the transition table's to say (`transitions.ts`): only the first
 * two numeric parameters matter; private markers (`<=>?`) and intermediates select variants a line
 * renderer does not model, so such sequences never reach {@link CsiReader.dispatch}, except the
 * alternate screen switch (`?` first), which hides the line while it is active. Colors and other
 * modes are stripped without effect.
 */
export class CsiReader {
  readonly #line: TerminalLine
  readonly #text: TextBatch
  readonly #rows: ScreenRows
  #param = -1
  #second = -1
  #paramIndex = 0
  #private = false
  #alternateScreen = false

  /** @param line - the line edited by dispatched sequences; `text` is flushed into it first; `rows` follows row moves. */
  constructor(line: TerminalLine, text: TextBatch, rows: ScreenRows) {
    this.#line = line
    this.#text = text
    this.#rows = rows
  }

  /**
   * Whether a program switched to the alternate screen (`CSI ? 1049 h`, `? 1047 h`, `? 47 h`) and
   * has not switched back: a full-screen program (an editor, a pager) owns the terminal.
   */
  get alternateScreen(): boolean {
    return this.#alternateScreen
  }

  /** Begin a sequence after `ESC [` or 0x9B. */
  start(): void {
    this.#param = -1
    this.#second = -1
    this.#paramIndex = 0
    this.#private = false
  }

  /** A parameter digit 0x30–0x39: only the first two parameters are kept (each capped at a million). */
  digit(byte: number): void {
    if (this.#paramIndex === 0) this.#param = Math.min(Math.max(this.#param, 0) * 10 + (byte - 0x30), 1e6)
    else if (this.#paramIndex === 1) this.#second = Math.min(Math.max(this.#second, 0) * 10 + (byte - 0x30), 1e6)
  }

  /** A parameter separator (`;` or `:`): the next digits belong to the next parameter. */
  separator(): void {
    this.#paramIndex += 1
  }

  /** `?` as the first byte: the sequence sets or resets a DEC private mode. */
  privateMarker(): void {
    this.#private = true
  }

  /** The final byte 0x40–0x7E of a sequence the transition table did not mark ignored: apply it. */
  dispatch(final: number): void {
    if (this.#private) return this.#privateMode(final)
    const line = this.#line
    if (line.hidden) return
    const count = Math.max(this.#param, 1)
    switch (final) {
      case 0x4b: // EL: erase in line
        this.#text.flush()
        if (this.#param <= 0) line.eraseToEnd()
        else if (this.#param === 1) line.eraseToStart()
        else if (this.#param === 2) line.eraseLine()
        break
      case 0x58: // ECH: erase characters
        this.#text.flush()
        line.eraseCharacters(count)
        break
      case 0x50: // DCH: delete characters
        this.#text.flush()
        line.deleteCharacters(count)
        break
      case 0x40: // ICH: insert blank characters
        this.#text.flush()
        line.insertBlanks(count)
        break
      case 0x47: // CHA: cursor horizontal absolute
      case 0x60: // HPA
        this.#text.flush()
        line.moveTo(count - 1)
        break
      case 0x43: // CUF: cursor forward
      case 0x61: // HPR
        this.#text.flush()
        line.moveTo(line.cursor + count)
        break
      case 0x44: // CUB: cursor backward
        this.#text.flush()
        line.moveTo(line.cursor - count)
        break
      case 0x48: // CUP: cursor position
      case 0x66: // HVP
        this.#text.flush()
        this.#rows.moveTo(count - 1)
        line.moveTo(Math.max(this.#second, 1) - 1)
        break
      case 0x64: // VPA: line position absolute
        this.#rows.moveTo(count - 1)
        break
      case 0x41: // CUU: cursor up
        this.#rows.moveBy(-count)
        break
      case 0x42: // CUD: cursor down
        this.#rows.moveBy(count)
        break
      case 0x45: // CNL: cursor next line
      case 0x46: // CPL: cursor preceding line
        this.#text.flush()
        this.#rows.moveBy(final === 0x45 ? count : -count)
        line.moveTo(0)
        break
      case 0x72: // DECSTBM: set the scroll region (the cursor goes home)
        this.#text.flush()
        this.#rows.scrollRegion()
        line.moveTo(0)
        break
      case 0x4a: // ED: erase in display; on the cursor's row it erases like EL (3 erases only the history)
        this.#text.flush()
        if (this.#param === 3) break
        this.#rows.erase(Math.max(this.#param, 0))
        if (this.#param <= 0) line.eraseToEnd()
        else if (this.#param === 1) line.eraseToStart()
        else line.eraseLine()
        break
      default:
    }
  }

  /**
   * DEC private modes: only the alternate screen switch is tracked (`h` sets, `l` resets). Text up
   * to the switch belongs to the screen it was written on, so it is flushed first; then the line
   * hides while the alternate screen is active and shows again, as it was, when it ends.
   */
  #privateMode(final: number): void {
    if ((final !== 0x68 && final !== 0x6c) || !ALTERNATE_SCREEN_MODES.has(this.#param)) return
    this.#text.flush()
    this.#alternateScreen = final === 0x68
    this.#line.hidden = this.#alternateScreen
  }
}

/** DEC private modes that switch to the alternate screen buffer (1049 also saves the cursor). */
const ALTERNATE_SCREEN_MODES: ReadonlySet<number> = new Set([47, 1047, 1049])
