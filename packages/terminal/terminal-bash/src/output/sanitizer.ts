import { Buffer } from 'node:buffer'
import { CsiReader } from './csi'
import * as decode from './decode'
import { TerminalLine } from './line'
import { OscPayload } from './osc-payload'
import { DEFAULT_SCREEN, ScreenRows } from './screen-rows'
import { TextBatch } from './text-batch'
import * as transitions from './sanitizer-table'
import * as width from './width'
import type { PartialLine, PromptMarker, SanitizedChunk, TerminalSanitizerOptions } from './types'

/** Default columns retained of one unterminated line (its tail survives when it grows longer). */
export const DEFAULT_MAX_LINE_LENGTH = 1_048_576

// Module-local bindings of the tables and of the functions the hot loop calls: under a CommonJS
// transform (tsx, vitest) an imported binding is a getter call, which the loop must not pay per byte.
const { ACTION_SHIFT, Action, CSI_DIGIT_SPAN, GROUND_LEAD_SPAN, GROUND_TEXT_SPAN, PRINT_IN_GROUND, ROW_SHIFT, STATE_MASK, State, TRANSITIONS } = transitions
const { BROKEN, PENDING, sequenceLength, Utf8Decoder } = decode
const { sequenceWidth } = width
type State = transitions.State

const REPLACEMENT = 0xfffd
/** The parameter entries of a CSI sequence: its fast path reads them while bytes map to these. */
const DIGIT_IN_PARAMETERS = (Action.CsiDigit << ACTION_SHIFT) | State.CsiParameters
const SEPARATOR_IN_PARAMETERS = (Action.CsiSeparator << ACTION_SHIFT) | State.CsiParameters
/** The entry of ESC wherever it starts an escape sequence: it does nothing else. */
const ESCAPE_ENTRY = (Action.Ignore << ACTION_SHIFT) | State.Escape
/** The entry of a final byte after parameters: the sequence is applied and ground follows. */
const DISPATCH_FROM_PARAMETERS = (Action.CsiDispatch << ACTION_SHIFT) | State.Ground
/**
 * The ground fast path may test four bytes at once for "all printable ASCII" only while the table
 * prints every byte from 0x20 to 0x7E in ground (it does; checked at load so a table change that
 * narrowed it falls back to the byte test instead of printing a byte the table would not).
 */
const WORDS_PRINT = GROUND_TEXT_SPAN.first <= 0x20 && GROUND_TEXT_SPAN.last >= 0x7e
/** Chunks shorter than this skip the word test (a prompt or an echo: the view costs more than it saves). */
const WORD_SCAN_MIN = 64
/**
 * Nonzero when a byte of `word` is below 0x20 or at least 0x7F (then the bytes are looked at one by
 * one). Exact in that direction: no such byte is missed; a flagged word may hold none.
 */
const notAllPrintable = (word: number): number => (((word - 0x20202020) & ~word) | word | (word + 0x01010101)) & 0x80808080
/** Runs shorter than this are batched; longer ones are decoded natively in one call. */
const SHORT_RUN = 48
const EMPTY: readonly never[] = Object.freeze([])

/**
 * Streaming ECMA-48 sanitizer: raw PTY bytes in, rendered lines plus prompt markers out.
 *
 * It is a byte-at-a-time state machine, so its output never depends on how the stream was split
 * into chunks, each chunk costs O(chunk), and the only carried state is a few integers plus a few
 * dozen bytes of OSC payload (see {@link OscPayload}). The machine is data, after the DEC/VT500
 * parser that xterm.js also follows: one table sorts the 256 byte values into classes
 * (`byte-classes.ts`), one table gives for each state and class an action and the next state
 * (`transitions.ts`, expanded per byte), and the hot loop looks up and dispatches on the action.
 * The fast paths (runs of text in ground, a CSI sequence's parameters) ask the same table: a span
 * of bytes read off it at load time is tested with two comparisons (printable ASCII four bytes at a
 * time on word boundaries, while that span covers it), any other byte looks it up.
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
  // OSC payload is kept (bounded) because it may be a prompt marker.
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

  /** Row-changing cursor moves and scroll regions on the normal screen so far (see {@link ScreenRows.verticalMoves}). */
  get verticalMoves(): number {
    return this.#rows.verticalMoves
  }

  /** Consume one chunk of PTY output. */
  write(input: Uint8Array): SanitizedChunk {
    const firstLine = this.#line.number
    const buffer = Buffer.isBuffer(input) ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength)
    this.#state = this.#parse(input, buffer, this.#state)
    return this.#flush(firstLine)
  }

  /**
   * The hot loop: each byte's class and the state pick a table entry; its action is applied and its
   * state becomes the current one. Returns the state at the end of the chunk. (A method of its own so
   * the caller stores the state: code after a loop that first ran optimized has no type feedback.)
   */
  #parse(bytes: Uint8Array, buffer: Buffer, start: State): State {
    // Locals, so the loop reads registers rather than module bindings or private fields.
    const table = TRANSITIONS
    const ground = State.Ground
    const rowShift = ROW_SHIFT
    const stateMask = STATE_MASK
    const actionShift = ACTION_SHIFT
    const size = bytes.length
    const text = this.#text
    const csi = this.#csi
    const payload = this.#payload
    const printInGround = PRINT_IN_GROUND
    const escapeEntry = ESCAPE_ENTRY
    const escapeRow = State.Escape << ROW_SHIFT
    const textFirst = GROUND_TEXT_SPAN.first
    const textLast = GROUND_TEXT_SPAN.last
    const leadFirst = GROUND_LEAD_SPAN.first
    const leadLast = GROUND_LEAD_SPAN.last
    // Bytes before the first 4-byte boundary of the memory, then whole words (see notAllPrintable).
    const lead = (4 - (bytes.byteOffset & 3)) & 3
    const words = WORDS_PRINT && size >= WORD_SCAN_MIN ? new Uint32Array(bytes.buffer, bytes.byteOffset + lead, (size - lead) >> 2) : undefined
    const wordCount = words === undefined ? 0 : words.length
    let state: State = start
    let index = 0
    while (index < size) {
      if (state === ground) {
        // Fast path, written here rather than called so it is always compiled into the loop: the run
        // of bytes the table prints in ground (printable ASCII, TAB) and complete, valid, non-C1
        // UTF-8 sequences (lead bytes per the table), written at once.
        const start = index
        // Columns minus bytes: each byte is a column, except in multibyte and wide characters.
        let columnsOverBytes = 0
        while (index < size) {
          const byte = bytes[index] as number
          if (byte >= textFirst && byte <= textLast) {
            index += 1
            // On a word boundary: skip whole words of printable ASCII (a flood's lines are mostly that).
            if (((index - lead) & 3) === 0 && words !== undefined && index >= lead) {
              let word = (index - lead) >> 2
              while (word < wordCount && notAllPrintable(words[word] as number) === 0) word += 1
              index = lead + (word << 2)
            }
          } else if (byte >= leadFirst && byte <= leadLast) {
            const length = sequenceLength(bytes, index, size)
            if (length <= 0 || encodesC1(bytes, index)) break
            // Wide characters take two columns and combining marks none (neither starts below U+0300, lead byte 0xCC).
            columnsOverBytes += (byte >= 0xcc ? sequenceWidth(bytes, index, length) : 1) - length
            index += length
            // Any other byte asks the table; the ground row starts it (State.Ground is 0).
          } else if (table[byte] === printInGround) {
            index += 1
          } else break
        }
        if (index > start) this.#writeRun(bytes, buffer, start, index, columnsOverBytes)
        if (index >= size) break
      }
      let byte = bytes[index] as number
      let entry = table[(state << rowShift) | byte] as number
      index += 1
      if (entry === escapeEntry && index < size) {
        // ESC only moves to the escape state: the byte after it (most often `[`) is looked up in
        // the same turn, as the next turn would.
        byte = bytes[index] as number
        entry = table[escapeRow | byte] as number
        index += 1
      }
      state = (entry & stateMask) as State
      // Literal labels (checked against `Action` by the type checker) let V8 compile a jump table.
      switch (entry >> actionShift) {
        case 0 satisfies typeof Action.Ignore:
          break
        case 1 satisfies typeof Action.Print:
          // Text in ground is the fast path's; here only TAB inside a sequence prints.
          text.point(byte)
          break
        case 2 satisfies typeof Action.Utf8Lead: {
          const length = sequenceLength(bytes, index - 1, size)
          if (length === 0) {
            // The chunk ends inside the sequence: decode it byte by byte from here.
            this.#utf8.start(byte)
            state = State.Utf8
          } else if (length < 0) {
            // Broken: one U+FFFD for its maximal subpart; the byte that broke it is read again.
            text.point(REPLACEMENT)
            index += -length - 1
          } else if (encodesC1(bytes, index - 1)) {
            // A C1 control encoded in UTF-8 (U+0080–U+009F): dropped, not interpreted.
            index += length - 1
          } else {
            // A complete, valid character after an aborted sequence: the fast path takes it.
            index -= 1
          }
          break
        }
        case 3 satisfies typeof Action.Utf8Continue: {
          const point = this.#utf8.next(byte)
          if (point === BROKEN) {
            text.point(REPLACEMENT)
            state = State.Ground
            index -= 1
          } else if (point !== PENDING) {
            state = State.Ground
            // C1 controls encoded in UTF-8 (U+0080–U+009F) are dropped, not interpreted.
            if (!isC1(point)) text.point(point)
          }
          break
        }
        case 4 satisfies typeof Action.Replace:
          text.point(REPLACEMENT)
          break
        case 5 satisfies typeof Action.NewLine:
          this.#newline()
          break
        case 6 satisfies typeof Action.CarriageReturn:
          text.flush()
          this.#line.carriageReturn()
          break
        case 7 satisfies typeof Action.Backspace:
          text.flush()
          this.#line.backspace()
          break
        case 8 satisfies typeof Action.ReverseIndex:
          if (!this.#line.hidden) this.#rows.moveBy(-1)
          break
        case 9 satisfies typeof Action.CsiStart: {
          csi.start()
          // Parameters usually follow at once: a digit or separator here reads as in the parameters.
          const end = this.#csiParameters(bytes, index, size)
          if (end > index) {
            state = State.CsiParameters
            index = end
            // And then the final byte, most often: applied here when the table says it dispatches.
            if (index < size) {
              const final = bytes[index] as number
              const next = table[(State.CsiParameters << rowShift) | final] as number
              if (next === DISPATCH_FROM_PARAMETERS) {
                csi.dispatch(final)
                state = ground
                index += 1
              }
            }
          }
          break
        }
        case 10 satisfies typeof Action.CsiDigit:
          csi.digit(byte)
          index = this.#csiParameters(bytes, index, size)
          break
        case 11 satisfies typeof Action.CsiSeparator:
          csi.separator()
          index = this.#csiParameters(bytes, index, size)
          break
        case 12 satisfies typeof Action.CsiPrivate:
          csi.privateMarker()
          break
        case 13 satisfies typeof Action.CsiDispatch:
          csi.dispatch(byte)
          break
        case 14 satisfies typeof Action.OscStart:
          payload.reset()
          break
        case 15 satisfies typeof Action.OscPut:
          payload.push(byte)
          break
        case 16 satisfies typeof Action.OscEnd:
          this.#finishOsc()
          break
      }
    }
    return state
  }

  /** End of stream: an incomplete UTF-8 sequence becomes U+FFFD and any open sequence is dropped. */
  end(): SanitizedChunk {
    const firstLine = this.#line.number
    if (this.#utf8.reset()) this.#text.point(REPLACEMENT)
    this.#state = State.Ground
    return this.#flush(firstLine)
  }

  /** Writes the run `bytes[start..end)` to the line: short runs batched, longer ones decoded natively. */
  #writeRun(bytes: Uint8Array, buffer: Buffer, start: number, end: number, columnsOverBytes: number): void {
    const points = end - start + columnsOverBytes
    if (end - start < SHORT_RUN) this.#text.bytes(bytes, start, end, points)
    else {
      this.#text.flush()
      this.#line.write(buffer.toString(columnsOverBytes !== 0 ? 'utf8' : 'latin1', start, end), points, end - start)
    }
  }

  #flush(firstLine: number): SanitizedChunk {
    this.#text.flush()
    // A chunk that completed no line (a prompt, an echo, most of a send's chunks) shares the empty arrays.
    const completed = this.#lines.length > 0
    const chunk: SanitizedChunk = {
      lines: completed ? this.#lines : EMPTY,
      sizes: completed ? this.#sizes : EMPTY,
      firstLine,
      clipped: this.#clipped.length === 0 ? EMPTY : this.#clipped,
      markers: this.#markers.length === 0 ? EMPTY : this.#markers,
      line: this.#line,
    }
    if (completed) {
      this.#lines = []
      this.#sizes = []
    }
    if (this.#clipped.length > 0) this.#clipped = []
    if (this.#markers.length > 0) this.#markers = []
    return chunk
  }

  /**
   * Fast path in a CSI sequence's parameters: the digits and separators from `start`, each asked of
   * the table (the same entries the hot loop would apply). Returns where they end.
   */
  #csiParameters(bytes: Uint8Array, start: number, size: number): number {
    const table = TRANSITIONS
    const csi = this.#csi
    const row = State.CsiParameters << ROW_SHIFT
    const { first, last } = CSI_DIGIT_SPAN
    let index = start
    while (index < size) {
      const byte = bytes[index] as number
      if (byte >= first && byte <= last) {
        csi.digit(byte)
        index += 1
        continue
      }
      const entry = table[row | byte]
      if (entry === DIGIT_IN_PARAMETERS) csi.digit(byte)
      else if (entry === SEPARATOR_IN_PARAMETERS) csi.separator()
      else break
      index += 1
    }
    return index
  }

  /** BEL or ST ended an OSC string: its payload may be one of the prompt markers. */
  #finishOsc(): void {
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

/** A C1 control (U+0080–U+009F): when it arrives encoded in UTF-8 it is dropped, not interpreted. */
function isC1(point: number): boolean {
  return point >= 0x80 && point <= 0x9f
}

/** The complete UTF-8 sequence at `lead` encodes a C1 control (lead 0xC2, then 0x80–0x9F). */
function encodesC1(bytes: Uint8Array, lead: number): boolean {
  return bytes[lead] === 0xc2 && (bytes[lead + 1] as number) < 0xa0
}
