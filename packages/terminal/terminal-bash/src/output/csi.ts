import type { TerminalLine } from './line'
import type { ScreenRows } from './screen-rows'
import type { TextBatch } from './text-batch'

/**
 * Reads the parameter, intermediate and final bytes (0x20–0x7E) of one CSI sequence and applies
 * the ones that edit a line: EL (`K`), ECH (`X`), DCH (`P`), ICH (`@`), CHA/HPA (`G`, `` ` ``),
 * CUF/HPR (`C`, `a`), CUB (`D`), and the ones that say which row the cursor is on (CUP/HVP `H`
 * `f`, VPA `d`, CUU `A`, CUD `B`, CNL `E`, CPL `F`, ED `J`) for {@link ScreenRows}. Only the first
 * two numeric parameters matter to those; private markers (`<=>?`) and intermediates select variants
 * a line renderer does not model, so such sequences do nothing, except the alternate screen switch,
 * which hides the line while it is active. Colors and other modes are stripped without effect.
 */
export class CsiReader {
  readonly #line: TerminalLine
  readonly #text: TextBatch
  readonly #rows: ScreenRows
  #param = -1
  #second = -1
  #paramIndex = 0
  #ignore = false
  #private = false
  #ended = false
  #alternateScreen = false

  /** @param line - the line edited by dispatched sequences; `text` is flushed into it first; `rows` follows row moves. */
  constructor(line: TerminalLine, text: TextBatch, rows: ScreenRows) {
    this.#line = line
    this.#text = text
    this.#rows = rows
  }

  /** Whether the final byte of the current sequence has been read. */
  get ended(): boolean {
    return this.#ended
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
    this.#ignore = false
    this.#private = false
    this.#ended = false
  }

  /**
   * Read from `bytes[index..]` up to and including the final byte (then {@link CsiReader.ended}),
   * or up to any byte outside 0x20–0x7E. Returns the index of the first byte not consumed.
   */
  scan(bytes: Uint8Array, index: number, size: number): number {
    while (index < size) {
      const byte = bytes[index] as number
      if (byte < 0x20 || byte > 0x7e) return index
      index += 1
      if (this.feed(byte)) return index
    }
    return index
  }

  /** One byte 0x20–0x7E; returns true when it was the final byte (and applies the sequence). */
  feed(byte: number): boolean {
    if (byte >= 0x40) {
      this.#ended = true
      if (!this.#ignore) this.#dispatch(byte)
      return true
    }
    if (byte >= 0x30 && byte <= 0x39) {
      if (this.#paramIndex === 0) this.#param = Math.min(Math.max(this.#param, 0) * 10 + (byte - 0x30), 1e6)
      else if (this.#paramIndex === 1) this.#second = Math.min(Math.max(this.#second, 0) * 10 + (byte - 0x30), 1e6)
    } else if (byte === 0x3b || byte === 0x3a) {
      this.#paramIndex += 1
    } else if (byte === 0x3f && this.#param < 0 && this.#paramIndex === 0 && !this.#private) {
      this.#private = true
    } else {
      this.#ignore = true
    }
    return false
  }

  #dispatch(final: number): void {
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
