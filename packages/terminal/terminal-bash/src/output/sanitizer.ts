import { Buffer } from 'node:buffer'
import { CsiReader } from './csi'
import { BROKEN, PENDING, sequenceLength, Utf8Decoder } from './decode'
import { TerminalLine } from './line'
import { OscPayload } from './osc-payload'
import { DEFAULT_SCREEN, ScreenRows } from './screen-rows'
import { TextBatch } from './text-batch'
import { sequenceWidth } from './width'
import type { PartialLine, PromptMarker, SanitizedChunk, TerminalSanitizerOptions } from './types'

/** Default columns retained of one unterminated line (its tail survives when it grows longer). */
export const DEFAULT_MAX_LINE_LENGTH = 1_048_576

/** Parser states (plain numbers: the hot loop compares them on every byte). */
const State = {
  Ground: 0,
  Escape: 1,
  EscapeIntermediate: 2,
  Csi: 3,
  String: 4,
  StringEscape: 5,
} as const
type State = (typeof State)[keyof typeof State]

const REPLACEMENT = 0xfffd
/** C0 controls with an effect (BS, LF, VT, FF, CR, ESC); the rest vanish. */
const RENDERED_C0: readonly boolean[] = Array.from({ length: 32 }, (_, byte) => [0x08, 0x0a, 0x0b, 0x0c, 0x0d, 0x1b].includes(byte))
/** Runs shorter than this are batched; longer ones are decoded natively in one call. */
const SHORT_RUN = 48
const EMPTY: readonly never[] = Object.freeze([])

/**
 * Streaming ECMA-48 sanitizer: raw PTY bytes in, rendered lines plus prompt markers out.
 *
 * It is a byte-at-a-time state machine (with a fast path for runs of plain text), so its output
 * never depends on how the stream was split into chunks, each chunk costs O(chunk), and the only
 * carried state is a few integers plus a few dozen bytes of OSC payload (see {@link OscPayload}).
 *
 * Stripped: CSI (`ESC [` / 0x9B … final 0x40–0x7E), OSC (`ESC ]` … BEL or ST), DCS/SOS/PM/APC
 * strings (`ESC P`/`X`/`^`/`_` … BEL or ST), charset designations and every other `ESC`
 * intermediate…final sequence, C0 controls other than the ones below, and DEL.
 * Rendered: LF (and VT, FF, `ESC E`) completes a line; CR returns the cursor so later text overwrites
 * the line from column 0 (a shorter rewrite leaves the old suffix, as on a terminal); backspace
 * only moves left; `CSI K` (modes 0–2), `CSI X`, `CSI P`, `CSI @`, `CSI G`, `CSI C`, `CSI D` edit
 * or move within the line (see {@link TerminalLine}); TAB is kept as one character. Vertical
 * movement is ignored: the output is line-oriented. What a full-screen program draws on the
 * alternate screen never reaches the lines; they continue where the normal screen was.
 *
 * UTF-8: invalid sequences become U+FFFD (one per maximal invalid subpart, as in the WHATWG
 * decoder), except that a raw byte 0x80–0x9F outside a sequence is taken as an 8-bit C1 control:
 * 0x9B opens a CSI, the others vanish (see `#c1` for why string openers are not honoured).
 * The C1 code points U+0080–U+009F that arrive *encoded* in UTF-8 are dropped, not interpreted.
 * Inside a control string every byte but BEL, ESC, CAN and SUB is payload (a UTF-8 title may
 * contain 0x9C), so BEL or `ESC \` ends it and CAN, SUB or another ESC sequence abort it.
 */
export class TerminalSanitizer {
  readonly #line: TerminalLine
  readonly #text: TextBatch
  readonly #utf8 = new Utf8Decoder()
  #state: State = State.Ground
  readonly #csi: CsiReader
  readonly #rows: ScreenRows
  // Control string: OSC payload is kept (bounded) because it may be a prompt marker.
  #osc = false
  readonly #payload = new OscPayload()
  // Output of the chunk being processed.
  #lines: string[] = []
  #sizes: number[] = []
  #clipped: number[] = []
  #markers: PromptMarker[] = []

  /** Creates a sanitizer at the start of a stream (column 0 of line 0, ground state). */
  constructor(options: TerminalSanitizerOptions = {}) {
    this.#line = new TerminalLine(options.maxLineLength ?? DEFAULT_MAX_LINE_LENGTH)
    this.#text = new TextBatch(this.#line)
    this.#rows = new ScreenRows(options.rows ?? DEFAULT_SCREEN.rows, options.cols ?? DEFAULT_SCREEN.cols)
    this.#csi = new CsiReader(this.#line, this.#text, this.#rows)
  }

  /** The terminal was resized: rows are counted on the new screen from here on. */
  resize(rows: number, cols: number): void {
    this.#rows.resize(rows, cols)
  }

  /** The live current line (shared by every chunk this sanitizer returns). */
  get line(): PartialLine {
    return this.#line
  }

  /** A full-screen program switched to the alternate screen and has not switched back. */
  get alternateScreen(): boolean {
    return this.#csi.alternateScreen
  }

  /** Consume one chunk of PTY output. */
  write(input: Uint8Array): SanitizedChunk {
    const firstLine = this.#line.number
    const bytes = input
    const buffer = Buffer.isBuffer(input) ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength)
    const size = bytes.length
    let index = 0
    while (index < size) {
      if (this.#state === State.Ground && !this.#utf8.pending) {
        // Fast path: a run of printable ASCII, TAB and complete, valid, non-C1 UTF-8 sequences.
        const start = index
        let points = 0
        let multibyte = false
        while (index < size) {
          const byte = bytes[index] as number
          if ((byte >= 0x20 && byte < 0x7f) || byte === 0x09) {
            index += 1
          } else if (byte >= 0xc2 && byte <= 0xf4) {
            const length = sequenceLength(bytes, index, size)
            if (length <= 0 || (byte === 0xc2 && (bytes[index + 1] as number) < 0xa0)) break
            // Wide characters take two columns (none starts below U+1100, lead byte 0xE1).
            if (byte >= 0xe1) points += sequenceWidth(bytes, index, length) - 1
            index += length
            multibyte = true
          } else break
          points += 1
        }
        if (index > start) {
          if (index - start < SHORT_RUN) this.#text.bytes(bytes, start, index, points)
          else {
            this.#text.flush()
            this.#line.write(buffer.toString(multibyte ? 'utf8' : 'latin1', start, index), points, index - start)
          }
        }
        if (index >= size) break
        // Then whatever ended the run, inline when it needs no state: line controls, CSI, bytes
        // that vanish and invalid UTF-8. Everything else goes through the state machine below.
        const byte = bytes[index] as number
        if (byte === 0x0a || byte === 0x0d) {
          this.#control(byte)
          index += 1
          continue
        }
        if (byte === 0x1b) {
          if (index + 1 < size && bytes[index + 1] === 0x5b) {
            this.#enterCsi()
            index += 2
          }
        } else if (byte >= 0xc2 && byte <= 0xf4) {
          const length = sequenceLength(bytes, index, size)
          if (length !== 0) {
            // Broken: one U+FFFD for its maximal subpart. Complete: a C1 control encoded in UTF-8.
            if (length < 0) this.#text.point(REPLACEMENT)
            index += Math.abs(length)
            continue
          }
        } else if (byte >= 0xa0) {
          this.#text.point(REPLACEMENT)
          index += 1
          continue
        } else if ((byte >= 0x80 && byte !== 0x9b) || byte === 0x7f || (byte < 0x20 && !RENDERED_C0[byte])) {
          index += 1
          continue
        }
      }
      if (this.#state === State.Csi) {
        index = this.#csi.scan(bytes, index, size)
        if (this.#csi.ended) {
          this.#state = State.Ground
          continue
        }
        if (index >= size) break
      }
      this.#byte(bytes[index] as number)
      index += 1
    }
    return this.#flush(firstLine)
  }

  /** End of stream: an incomplete UTF-8 sequence becomes U+FFFD and any open sequence is dropped. */
  end(): SanitizedChunk {
    const firstLine = this.#line.number
    if (this.#utf8.reset()) this.#text.point(REPLACEMENT)
    this.#state = State.Ground
    return this.#flush(firstLine)
  }

  #flush(firstLine: number): SanitizedChunk {
    this.#text.flush()
    const chunk: SanitizedChunk = {
      lines: this.#lines,
      sizes: this.#sizes,
      firstLine,
      clipped: this.#clipped.length === 0 ? EMPTY : this.#clipped,
      markers: this.#markers.length === 0 ? EMPTY : this.#markers,
      line: this.#line,
    }
    this.#lines = []
    this.#sizes = []
    if (this.#clipped.length > 0) this.#clipped = []
    if (this.#markers.length > 0) this.#markers = []
    return chunk
  }

  /** One byte through the state machine; a byte that ends a sequence it cannot join is reprocessed. */
  #byte(byte: number): void {
    for (;;) {
      switch (this.#state) {
        case State.Ground:
          if (this.#ground(byte)) return
          break
        case State.Escape:
          if (this.#escape(byte)) return
          break
        case State.EscapeIntermediate:
          if (this.#intermediate(byte)) return
          break
        case State.Csi:
          if (this.#csiControl(byte)) return
          break
        case State.String:
          this.#string(byte)
          return
        case State.StringEscape:
          if (byte === 0x5c) {
            this.#finishString()
            this.#state = State.Ground
            return
          }
          // Any other ESC sequence aborts the string and starts itself.
          this.#state = State.Escape
          break
      }
    }
  }

  /** Ground state: returns false when the byte must be reprocessed (it broke a UTF-8 sequence). */
  #ground(byte: number): boolean {
    if (this.#utf8.pending) {
      const point = this.#utf8.next(byte)
      if (point === BROKEN) {
        this.#text.point(REPLACEMENT)
        return false
      }
      // C1 controls encoded in UTF-8 (U+0080–U+009F) are dropped, not interpreted.
      if (point !== PENDING && (point < 0x80 || point > 0x9f)) {
        this.#text.point(point)
      }
      return true
    }
    if (byte < 0x20 || byte === 0x7f) {
      if (byte === 0x1b) this.#state = State.Escape
      else this.#control(byte)
    } else if (byte < 0x80) {
      this.#text.point(byte)
    } else if (byte < 0xa0) {
      this.#c1(byte)
    } else if (byte < 0xc2 || byte > 0xf4) {
      this.#text.point(REPLACEMENT)
    } else {
      this.#utf8.start(byte)
    }
    return true
  }

  /** C0 controls and DEL: executed in every state except inside control strings. */
  #control(byte: number): void {
    switch (byte) {
      case 0x0a:
      case 0x0b:
      case 0x0c:
        this.#newline()
        break
      case 0x0d:
        this.#text.flush()
        this.#line.carriageReturn()
        break
      case 0x08:
        this.#text.flush()
        this.#line.backspace()
        break
      case 0x09:
        this.#text.point(0x09)
        break
      default:
      // BEL, NUL, SO/SI and the other C0 controls have no rendered form.
    }
  }

  /**
   * A raw byte 0x80–0x9F outside any UTF-8 sequence: an 8-bit C1 control. Only CSI is honoured;
   * in a UTF-8 stream such bytes are far more often cp1252 text or binary than real controls, and
   * a misread string opener (DCS/OSC/SOS/PM/APC) would swallow output up to the next BEL or ESC,
   * while a misread CSI ends at the next letter.
   */
  #c1(byte: number): void {
    if (byte === 0x9b) this.#enterCsi()
  }

  #escape(byte: number): boolean {
    if (byte >= 0x80) {
      this.#state = State.Ground
      return false
    }
    switch (byte) {
      case 0x5b:
        this.#enterCsi()
        return true
      case 0x5d:
        this.#enterString(true)
        return true
      case 0x50:
      case 0x58:
      case 0x5e:
      case 0x5f:
        this.#enterString(false)
        return true
      case 0x45:
        this.#state = State.Ground
        this.#newline()
        return true
      case 0x4d: // RI: reverse index, one row up
        this.#state = State.Ground
        if (!this.#line.hidden) this.#rows.moveBy(-1)
        return true
      case 0x1b:
        return true
      case 0x18:
      case 0x1a:
        this.#state = State.Ground
        return true
    }
    if (byte >= 0x20 && byte <= 0x2f) this.#state = State.EscapeIntermediate
    else if (byte >= 0x30 && byte <= 0x7e) this.#state = State.Ground
    else this.#control(byte)
    return true
  }

  #intermediate(byte: number): boolean {
    if (byte >= 0x80) {
      this.#state = State.Ground
      return false
    }
    if (byte >= 0x30 && byte <= 0x7e) this.#state = State.Ground
    else if (byte === 0x1b) this.#state = State.Escape
    else if (byte === 0x18 || byte === 0x1a) this.#state = State.Ground
    else if (byte < 0x20) this.#control(byte)
    return true
  }

  #enterCsi(): void {
    this.#state = State.Csi
    this.#csi.start()
  }

  /** A byte in CSI state: sequence bytes go to the reader; controls are executed meanwhile. */
  #csiControl(byte: number): boolean {
    if (byte >= 0x20 && byte <= 0x7e) {
      if (this.#csi.feed(byte)) this.#state = State.Ground
    } else if (byte >= 0x80) {
      this.#state = State.Ground
      return false
    } else if (byte === 0x1b) {
      this.#state = State.Escape
    } else if (byte === 0x18 || byte === 0x1a) {
      this.#state = State.Ground
    } else if (byte < 0x20) {
      this.#control(byte)
    }
    return true
  }

  #enterString(osc: boolean): void {
    this.#state = State.String
    this.#osc = osc
    this.#payload.reset()
  }

  #string(byte: number): void {
    if (byte === 0x07) {
      this.#finishString()
      this.#state = State.Ground
    } else if (byte === 0x1b) {
      this.#state = State.StringEscape
    } else if (byte === 0x18 || byte === 0x1a) {
      this.#state = State.Ground
    } else if (this.#osc) {
      this.#payload.push(byte)
    }
  }

  #finishString(): void {
    if (!this.#osc) return
    const marker = this.#payload.marker()
    if (!marker) return
    this.#text.flush()
    this.#markers.push({ line: this.#line.number, column: this.#line.cursor, ...marker })
  }

  #newline(): void {
    this.#text.flush()
    if (this.#line.hidden) return
    this.#line.dropTrailingBlanks()
    if (!this.#rows.complete(this.#line.text(), this.#line.length)) {
      // A row redrawn in place with the text it had: the history holds it already.
      this.#line.discard()
      return
    }
    if (this.#line.base > 0) this.#clipped.push(this.#lines.length)
    this.#sizes.push(this.#line.utf8Length())
    this.#lines.push(this.#line.complete())
  }
}
