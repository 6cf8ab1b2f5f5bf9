import { Buffer } from 'node:buffer'
import type { TerminalSize } from 'dsh-terminal'
import { isPlain, leadLength, unfinishedTail, validPoint } from './emulator-bytes'
import { GuardOutput, type GuardSink, NO_BYTES } from './emulator-pieces'
import { CSI_RULES, type CsiRule, ESC_RULES, type EscRule, MAX_PARAMETERS, MAX_SEQUENCE_BYTES, MAX_STRING_PAYLOAD } from './emulator-rules'

export type { GuardSink } from './emulator-pieces'

// The states of xterm's parser (`ParserState`), which the guard follows code point by code point.
const GROUND = 0
const ESCAPE = 1
const ESCAPE_INTERMEDIATE = 2
const CSI_ENTRY = 3
const CSI_PARAM = 4
const CSI_INTERMEDIATE = 5
const CSI_IGNORE = 6
const SOS_PM_APC = 7
const OSC = 8
const DCS_ENTRY = 9
const DCS_PARAM = 10
const DCS_IGNORE = 11
const DCS_INTERMEDIATE = 12
const DCS_PASSTHROUGH = 13
type State = number

const ESC = 0x1b
const CAN = 0x18
const SUB = 0x1a
const BEL = 0x07
const DEL = 0x7f
/** Code points from 0xA0 up are one class in xterm's table (`NON_ASCII_PRINTABLE`). */
const NON_ASCII = 0xa0
/** xterm's saturation of a parameter (`Params` MAX_VALUE). */
const MAX_VALUE = 0x7fffffff
const INITIAL_HOLD = 256

const CSI_RULE_BY_ID: ReadonlyMap<number, CsiRule> = new Map(CSI_RULES.map((rule) => [identifier(rule.intermediates, rule.final), rule]))
const ESC_RULE_BY_ID: ReadonlyMap<number, EscRule> = new Map(ESC_RULES.map((rule) => [identifier(rule.intermediates, rule.final), rule]))

/** xterm's handler key: the collected prefix and intermediates, shifted a byte per character, then the final. */
function identifier(intermediates: string, final: string): number {
  let collect = 0
  for (const character of intermediates) collect = (collect << 8) | character.charCodeAt(0)
  return (collect << 8) | final.charCodeAt(0)
}

/**
 * A streaming filter between the PTY and the session's emulator: what a program prints cannot make
 * the emulator do unbounded work or hold unbounded memory. It follows xterm's own parser state by
 * state (UTF-8 decoded as xterm decodes it, 8-bit C1 controls included), so it sees every sequence
 * xterm will dispatch, and:
 * - clamps the numeric parameters of the sequences in {@link CSI_RULES} to the screen, which leaves
 *   xterm's result unchanged (each rule says why);
 * - drops whole any OSC, DCS, SOS, PM or APC string over {@link MAX_STRING_PAYLOAD} and any escape
 *   sequence over {@link MAX_SEQUENCE_BYTES};
 * - cuts its output into pieces of at most {@link MAX_PIECE_WORK} cells of work, so xterm's parser,
 *   which yields to the event loop only between pieces, yields often enough.
 *
 * To do so it holds a sequence until it ends (and a UTF-8 character until it is whole, so xterm
 * never sees one split). C0 controls inside an escape or CSI sequence, which xterm executes on the
 * spot, are passed on at once, ahead of the held sequence: the same effect in the same order.
 * A chunk with no ESC and no C1 control, arriving with nothing held, passes untouched.
 */
export class EmulatorGuard {
  #size: TerminalSize
  #state: State = GROUND
  /** Bytes of the sequence or string being read, not yet passed on. */
  #held = new Uint8Array(INITIAL_HOLD)
  #heldLength = 0
  /** Where the held bytes start in the current chunk, while they are one stretch of it; else −1. */
  #heldFrom = -1
  /** The held sequence outgrew its bound: the rest of it vanishes. */
  #dropping = false
  /** Payload bytes of the string being read (after its opener). */
  #payload = 0
  /** The start of an unfinished UTF-8 character at the end of the last chunk. */
  #carry: Uint8Array | undefined
  // The CSI sequence being read, as xterm's `Params` sees it (top-level parameters only).
  readonly #parameters = new Int32Array(MAX_PARAMETERS)
  #parameterCount = 0
  #subParameter = false
  #rejectDigits = false
  #collect = 0
  /** The chunk being processed. */
  #input: Uint8Array = NO_BYTES
  readonly #out = new GuardOutput()

  /** A guard for a screen of `size`, at the start of a stream. */
  constructor(size: TerminalSize) {
    this.#size = { rows: size.rows, cols: size.cols }
  }

  /** The screen changed size at this point of the stream: later sequences are clamped to `size`. */
  resize(size: TerminalSize): void {
    this.#size = { rows: size.rows, cols: size.cols }
  }

  /** Bytes held back (an unfinished sequence or character), for tests and diagnostics. */
  get heldBytes(): number {
    return this.#heldLength + (this.#carry?.length ?? 0)
  }

  /** Filter one chunk; `sink` receives the pieces to hand to the emulator, in order, before this returns. */
  write(chunk: Uint8Array, sink: GuardSink): void {
    let input = chunk
    if (this.#carry) {
      input = Buffer.concat([this.#carry, chunk])
      this.#carry = undefined
    }
    if (this.#state === GROUND && this.#heldLength === 0 && isPlain(input)) {
      const tail = unfinishedTail(input)
      if (tail > 0) {
        this.#carry = input.slice(input.length - tail)
        input = input.subarray(0, input.length - tail)
      }
      if (input.length > 0) sink(input, 0)
      return
    }
    this.#input = input
    this.#heldFrom = -1
    this.#out.begin(input, sink)
    try {
      this.#parse(input)
    } finally {
      this.#out.end()
      this.#input = NO_BYTES
    }
  }

  /** Decodes UTF-8 as xterm's `Utf8ToUtf32` does and hands each code point (or invalid byte run) on. */
  #parse(input: Uint8Array): void {
    const size = input.length
    let index = 0
    while (index < size) {
      const byte = input[index] as number
      if (byte < 0x80) {
        if (this.#state === GROUND && byte !== ESC) {
          // Text and C0 controls in ground pass as a run.
          let end = index + 1
          while (end < size) {
            const next = input[end] as number
            if (next >= 0x80 || next === ESC) break
            end += 1
          }
          this.#out.pass(index, end)
          index = end
          continue
        }
        if ((this.#state === CSI_ENTRY || this.#state === CSI_PARAM) && byte >= 0x30 && byte <= 0x3b) {
          // A CSI sequence's parameters, read in one go (the path every colour and cursor move takes).
          let end = index
          while (end < size) {
            const next = input[end] as number
            if (next < 0x30 || next > 0x3b) break
            this.#parameterByte(next)
            end += 1
          }
          this.#hold(index, end)
          index = end
          continue
        }
        this.#codePoint(byte, index, index + 1)
        index += 1
        continue
      }
      const length = leadLength(byte)
      if (length === 0) {
        // A stray continuation byte or 0xF8–0xFF: xterm skips it.
        this.#noise(index, index + 1)
        index += 1
        continue
      }
      let point = byte & (length === 2 ? 0x1f : length === 3 ? 0x0f : 0x07)
      let end = index + 1
      while (end < size && end < index + length && ((input[end] as number) & 0xc0) === 0x80) {
        point = (point << 6) | ((input[end] as number) & 0x3f)
        end += 1
      }
      if (end === size && end < index + length) {
        // The chunk ends inside the character: keep it whole for the next chunk.
        this.#carry = input.slice(index)
        return
      }
      if (end < index + length) {
        // A byte that is no continuation breaks the character: xterm drops it and reads that byte anew.
        this.#noise(index, end)
        index = end
        continue
      }
      if (validPoint(point, length)) this.#codePoint(point, index, end)
      else this.#noise(index, end)
      index = end
    }
  }

  /** Bytes xterm decodes to nothing: they go wherever the current state sends its bytes. */
  #noise(start: number, end: number): void {
    if (this.#state === GROUND) this.#out.pass(start, end)
    else this.#hold(start, end, this.#state >= SOS_PM_APC)
  }

  /** One code point `point` at input bytes `[start, end)`: xterm's transition from the current state. */
  #codePoint(point: number, start: number, end: number): void {
    if (point === ESC || point === CAN || point === SUB || (point >= 0x80 && point < NON_ASCII)) return this.#control(point, start, end)
    const state = this.#state
    switch (state) {
      case GROUND:
        return this.#out.pass(start, end)
      case ESCAPE:
      case ESCAPE_INTERMEDIATE:
        return this.#escape(point, start, end)
      case CSI_ENTRY:
      case CSI_PARAM:
      case CSI_INTERMEDIATE:
      case CSI_IGNORE:
        return this.#csi(point, start, end)
      default:
        return this.#string(point, start, end)
    }
  }

  /** ESC, CAN, SUB and the C1 controls act in every state: they end what is held, then act as in ground. */
  #control(point: number, start: number, end: number): void {
    const state = this.#state
    if (state >= SOS_PM_APC) {
      // A string ends: ST, CAN and SUB belong to it; ESC and any other C1 start what follows.
      if (point === 0x9c || point === CAN || point === SUB) {
        this.#hold(start, end)
        return this.#endHeld(0)
      }
      this.#endHeld(0)
    } else if (state !== GROUND) {
      // An escape or CSI sequence left unfinished: xterm drops it, so passing its bytes on changes nothing.
      this.#endHeld(0)
    }
    this.#state = GROUND
    switch (point) {
      case ESC:
        this.#collect = 0
        return this.#open(ESCAPE, start, end)
      case 0x9b:
        return this.#openCsi(start, end)
      case 0x9d:
        return this.#openString(OSC, start, end)
      case 0x90:
        return this.#openString(DCS_ENTRY, start, end)
      case 0x98:
      case 0x9e:
      case 0x9f:
        return this.#openString(SOS_PM_APC, start, end)
      default:
        // CAN, SUB, ST and the other C1 controls execute (or do nothing) in ground.
        return this.#out.pass(start, end)
    }
  }

  #escape(point: number, start: number, end: number): void {
    if (point < 0x20) return this.#out.pass(start, end)
    if (point === DEL) return this.#hold(start, end)
    if (point >= NON_ASCII) {
      // xterm's table has no entry: the sequence is abandoned and the character swallowed.
      this.#hold(start, end)
      return this.#endHeld(0)
    }
    if (point <= 0x2f) {
      this.#collect = (this.#collect << 8) | point
      this.#state = ESCAPE_INTERMEDIATE
      return this.#hold(start, end)
    }
    if (this.#state === ESCAPE) {
      if (point === 0x5b) return this.#openCsi(start, end, true)
      if (point === 0x5d) return this.#continueAsString(OSC, start, end)
      if (point === 0x50) return this.#continueAsString(DCS_ENTRY, start, end)
      if (point === 0x58 || point === 0x5e || point === 0x5f) return this.#continueAsString(SOS_PM_APC, start, end)
    }
    // The final byte: dispatched.
    this.#hold(start, end)
    const rule = ESC_RULE_BY_ID.get((this.#collect << 8) | point)
    this.#endHeld(rule && !this.#dropping ? rule.work(this.#size) : 0)
  }

  #csi(point: number, start: number, end: number): void {
    if (point < 0x20) return this.#out.pass(start, end)
    const state = this.#state
    if (point >= NON_ASCII) {
      this.#hold(start, end)
      // CSI_IGNORE swallows it; the other CSI states have no entry: the sequence is abandoned.
      if (state !== CSI_IGNORE) this.#endHeld(0)
      return
    }
    this.#hold(start, end)
    if (point === DEL) return
    if (point >= 0x40 && point <= 0x7e) {
      if (state === CSI_IGNORE) return this.#endHeld(0)
      return this.#dispatchCsi(point)
    }
    if (state === CSI_IGNORE) return
    if (point >= 0x30 && point <= 0x3b && state !== CSI_INTERMEDIATE) return this.#parameterByte(point)
    if (point >= 0x3c && point <= 0x3f) {
      if (state === CSI_ENTRY) {
        this.#collect = (this.#collect << 8) | point
        this.#state = CSI_PARAM
      } else this.#state = CSI_IGNORE
      return
    }
    if (point >= 0x30) {
      // A parameter byte after an intermediate.
      this.#state = CSI_IGNORE
      return
    }
    this.#collect = (this.#collect << 8) | point
    this.#state = CSI_INTERMEDIATE
  }

  /** A digit, `;` or `:` of a CSI sequence, applied as xterm's `Params` does. */
  #parameterByte(point: number): void {
    this.#state = CSI_PARAM
    if (point === 0x3b) {
      this.#subParameter = false
      if (this.#parameterCount >= MAX_PARAMETERS) this.#rejectDigits = true
      else this.#parameters[this.#parameterCount++] = 0
    } else if (point === 0x3a) {
      this.#subParameter = true
    } else if (!this.#rejectDigits && !this.#subParameter) {
      const last = this.#parameterCount - 1
      this.#parameters[last] = Math.min((this.#parameters[last] as number) * 10 + (point - 0x30), MAX_VALUE)
    }
  }

  /** The final byte of a CSI sequence: clamp it if a rule says so, count its work, pass it on. */
  #dispatchCsi(final: number): void {
    this.#state = GROUND
    const rule = this.#dropping ? undefined : CSI_RULE_BY_ID.get((this.#collect << 8) | final)
    if (!rule) return this.#endHeld(0)
    let clamped = false
    for (let position = 0; position < rule.limits.length && position < this.#parameterCount; position++) {
      const limit = rule.limits[position]
      const value = this.#parameters[position] as number
      if (!limit) continue
      const bounded = limit(value, this.#size)
      if (bounded !== value) {
        this.#parameters[position] = bounded
        clamped = true
      }
    }
    const work = rule.work(this.#parameters[0] as number, this.#size)
    if (!clamped) return this.#endHeld(work)
    // Rewritten as xterm reads it: the top-level parameters (sub-parameters mean nothing to these
    // sequences), the intermediates and the final; empty and 0 are the same to xterm.
    let text = '\x1b['
    for (let position = 0; position < this.#parameterCount; position++) {
      const value = this.#parameters[position] as number
      text += (position > 0 ? ';' : '') + (value === 0 ? '' : String(value))
    }
    this.#release()
    this.#out.push(Buffer.from(text + rule.intermediates + String.fromCharCode(final), 'latin1'), work)
  }

  /** A byte of an OSC, DCS, SOS, PM or APC string (never ESC, CAN, SUB or a C1 control: see {@link EmulatorGuard.#control}). */
  #string(point: number, start: number, end: number): void {
    const state = this.#state
    const ends = state === OSC ? point === BEL : point >= NON_ASCII && state !== DCS_PASSTHROUGH && state !== DCS_IGNORE && state !== OSC
    if (ends) {
      // BEL ends an OSC string; a non-ASCII character has no entry in xterm's table in the other
      // string states: the string is abandoned and the character swallowed with it.
      this.#hold(start, end)
      return this.#endHeld(0)
    }
    this.#hold(start, end, true)
    if (state === OSC || state === SOS_PM_APC || state === DCS_PASSTHROUGH || state === DCS_IGNORE || point < 0x20 || point === DEL) return
    if (point >= 0x40 && point <= 0x7e) this.#state = DCS_PASSTHROUGH
    else if (point >= 0x20 && point <= 0x2f) this.#state = DCS_INTERMEDIATE
    else if (state === DCS_INTERMEDIATE) this.#state = DCS_IGNORE
    else if (point >= 0x3c && point <= 0x3f) this.#state = state === DCS_ENTRY ? DCS_PARAM : DCS_IGNORE
    else this.#state = DCS_PARAM
  }

  #openCsi(start: number, end: number, continued = false): void {
    this.#parameters[0] = 0
    this.#parameterCount = 1
    this.#subParameter = false
    this.#rejectDigits = false
    this.#collect = 0
    if (continued) {
      // ESC was held already: `[` joins it.
      this.#state = CSI_ENTRY
      return this.#hold(start, end)
    }
    this.#open(CSI_ENTRY, start, end)
  }

  /** `ESC ]`, `ESC P`, `ESC X`/`^`/`_`: the held ESC becomes the string's opener. */
  #continueAsString(state: State, start: number, end: number): void {
    this.#state = state
    this.#payload = 0
    this.#hold(start, end)
  }

  #openString(state: State, start: number, end: number): void {
    this.#payload = 0
    this.#open(state, start, end)
  }

  #open(state: State, start: number, end: number): void {
    this.#state = state
    this.#dropping = false
    this.#heldLength = 0
    this.#heldFrom = start
    this.#hold(start, end)
  }

  /**
   * Input bytes `[start, end)` join the held sequence (`payload`: as bytes of a string's payload),
   * unless it outgrew its bound: then it is dropped whole, these bytes and the rest of it included.
   */
  #hold(start: number, end: number, payload = false): void {
    if (this.#dropping) return
    const length = end - start
    if (payload) this.#payload += length
    const outgrown = this.#state >= SOS_PM_APC ? this.#payload > MAX_STRING_PAYLOAD : this.#heldLength + length > MAX_SEQUENCE_BYTES
    if (outgrown) {
      this.#dropping = true
      this.#release()
      return
    }
    if (this.#heldFrom >= 0 && this.#heldFrom + this.#heldLength !== start) this.#heldFrom = -1
    if (this.#heldLength + length > this.#held.length) {
      const grown = new Uint8Array(Math.max(this.#held.length * 2, this.#heldLength + length))
      grown.set(this.#held.subarray(0, this.#heldLength))
      this.#held = grown
    }
    // Byte by byte: nearly every call holds one to four bytes, where a subarray would cost more than the copy.
    const held = this.#held
    const input = this.#input
    for (let index = start; index < end; index++) held[this.#heldLength++] = input[index] as number
  }

  /** The held sequence or string ended: passed on whole (costing `work`), or nothing if it was dropped. */
  #endHeld(work: number): void {
    this.#state = GROUND
    if (this.#dropping) {
      this.#dropping = false
      this.#release()
      return
    }
    if (this.#heldLength === 0) return
    if (this.#heldFrom >= 0) {
      // All of it lies in this chunk, in one stretch: it joins the run, no copy.
      this.#out.pass(this.#heldFrom, this.#heldFrom + this.#heldLength)
      this.#out.addWork(work)
    } else this.#out.push(this.#held.slice(0, this.#heldLength), work)
    this.#release()
  }

  #release(): void {
    this.#heldLength = 0
    this.#heldFrom = -1
    if (this.#held.length > 4 * INITIAL_HOLD) this.#held = new Uint8Array(INITIAL_HOLD)
  }
}
