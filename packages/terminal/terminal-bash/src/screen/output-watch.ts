import { KeptSettings, MAX_KEPT_TITLE_BYTES } from './kept-settings'

/**
 * The CSI finals of the sequences the emulator answers (`@xterm/headless` 6, plus the session's own
 * colour handlers): DA (`c`, `> c`), DSR/CPR (`n`, `? n`), DECRQM (`$ p`, `? $ p`) and the window
 * reports (`t`). Any prefix or intermediate counts: a sequence with one of these finals is taken as
 * a query even where it is not one (`CSI ! p`, a soft reset), which only costs an early parse.
 */
const ANSWERED_CSI_FINALS: ReadonlySet<number> = new Set([...'cnpt'].map((final) => final.charCodeAt(0)))

/** Most parameters of one CSI sequence read for kept modes (`CSI ? 1 ; 2004 h`); later ones are not kept. */
const MAX_MODE_PARAMETERS = 16

/** States of the watch (plain numbers: the loop switches on them). */
const Watch = {
  /** Text: only ESC and 8-bit controls matter. */
  Ground: 0,
  /** After ESC. */
  Escape: 1,
  /** After ESC and an intermediate (a charset designation and the like): ends at a final. */
  EscapeIntermediate: 2,
  /** Inside a CSI sequence, up to its final byte. */
  Csi: 3,
  /** Inside an OSC string: a `?` in it asks for an answer (a colour query); `0;`/`2;` set the title. */
  Osc: 4,
  /** Inside a DCS, SOS, PM or APC string, up to its end. */
  ControlString: 5,
} as const
type Watch = (typeof Watch)[keyof typeof Watch]

const ESC = 0x1b
const CAN = 0x18
const SUB = 0x1a
const BEL = 0x07
const QUESTION = 0x3f
const SEMICOLON = 0x3b
/** The lead byte of the UTF-8 encoding of U+0080–U+00BF: `C2 9B` is the C1 CSI, as xterm decodes it. */
const C1_LEAD = 0xc2
const C1_CSI = 0x9b
const C1_DCS = 0x90
const C1_OSC = 0x9d
const C1_ST = 0x9c
/** SOS, PM, APC: strings xterm reads and ignores. */
const C1_IGNORED_STRINGS: ReadonlySet<number> = new Set([0x98, 0x9e, 0x9f])

/**
 * What a screen model that does not parse the output must still know of it (see `ScreenModel`):
 * - whether a chunk asks the terminal something: a program waits for the answer, so that chunk must
 *   reach the emulator at once;
 * - whether a chunk starts outside any sequence, so an emulator restarted after output was dropped
 *   starts at a chunk it reads as xterm would;
 * - the settings to restore on such a restart ({@link KeptSettings}).
 *
 * It follows xterm's parser only as far as it must, and errs one way: wherever the two could differ,
 * it stays inside a sequence longer than xterm would (any DCS string and any OSC string holding a
 * `?` count as queries), so a missed answer is impossible and a false alarm only parses early. C1
 * controls count as xterm decodes them: UTF-8 encoded (`C2 9B`), never as raw bytes. O(chunk), with
 * tight loops over text and string payloads.
 */
export class OutputWatch {
  /** The settings seen so far. */
  readonly settings = new KeptSettings()
  #state: Watch = Watch.Ground
  /** The previous byte was `C2`, the first byte of a UTF-8 encoded C1 control. */
  #afterC1Lead = false
  /**
   * A string is open whose end the emulator answers (a DCS, an OSC holding a `?`): every chunk up
   * to and including the one that ends it counts, wherever the answer is produced.
   */
  #answering = false
  // The CSI sequence being read: `?` first, `!` seen, its parameters so far.
  #private = false
  /** A byte after the opener was read: a `?` now is not the private marker. */
  #csiStarted = false
  #bang = false
  readonly #parameters: number[] = []
  #parameter = -1
  // The OSC string being read: its number while its digits are read (-2 once past them), and the title bytes.
  #oscNumber = -1
  readonly #title = new Uint8Array(MAX_KEPT_TITLE_BYTES)
  /** Title bytes kept so far; -1 when this OSC sets no title or its title is too long to keep. */
  #titleLength = -1
  #groundFrom = -1

  /**
   * Where in the latest scanned chunk the watch first stood outside any sequence (0: the chunk
   * started there), or -1 when the whole chunk lay inside one: an emulator started afresh may begin
   * reading the chunk at that offset.
   */
  get groundFrom(): number {
    return this.#groundFrom
  }

  /** Read one chunk; whether it holds (or ends) a sequence the emulator would answer. */
  scan(bytes: Uint8Array): boolean {
    let answering = this.#answering
    let asks = answering
    let state = this.#state
    let afterC1Lead = this.#afterC1Lead
    const size = bytes.length
    let index = 0
    let nextLead = -1
    let groundFrom = -1
    while (index < size) {
      if (groundFrom === -1 && state === Watch.Ground && !afterC1Lead) groundFrom = index
      let byte = bytes[index] as number
      if (!afterC1Lead) {
        // Text and string payloads: skip to the next byte that can matter.
        if (state === Watch.Ground) {
          // Native searches: the next ESC, and the next `C2` (found once per chunk, again only once passed).
          if (nextLead < index) nextLead = indexOrEnd(bytes, C1_LEAD, index)
          const nextEscape = byte === ESC ? index : indexOrEnd(bytes, ESC, index)
          index = Math.min(nextEscape, nextLead)
          if (index < size) byte = bytes[index] as number
        } else if (state === Watch.Csi && !this.#private && (this.#csiStarted || byte !== QUESTION)) {
          // Parameters and intermediates of a sequence no kept mode depends on (`?` first would make
          // it one): skip to its final, noting a `!` (DECSTR).
          this.#csiStarted = true
          while (byte >= 0x20 && byte <= 0x3f) {
            if (byte === 0x21) this.#bang = true
            if (++index === size) break
            byte = bytes[index] as number
          }
        } else if (state === Watch.ControlString || (state === Watch.Osc && this.#oscNumber === -2 && this.#titleLength < 0)) {
          while (byte !== ESC && byte !== C1_LEAD && byte !== BEL && byte !== CAN && byte !== SUB && byte !== QUESTION && ++index < size)
            byte = bytes[index] as number
        }
        if (index === size) break
      }
      index += 1
      const c1 = afterC1Lead ? byte : -1
      afterC1Lead = byte === C1_LEAD
      if (byte === ESC) {
        // ESC ends an OSC string as xterm ends it: successfully, whatever follows.
        if (state === Watch.Osc) this.#endOsc()
        state = Watch.Escape
      } else if (byte === CAN || byte === SUB) {
        state = Watch.Ground
        answering = false
      } else if (c1 === C1_CSI || c1 === C1_OSC || c1 === C1_DCS) {
        if (c1 === C1_CSI) this.#startCsi()
        else if (c1 === C1_OSC) this.#startOsc()
        state = c1 === C1_CSI ? Watch.Csi : c1 === C1_OSC ? Watch.Osc : Watch.ControlString
        answering = c1 === C1_DCS
        asks ||= answering
      } else if (c1 === C1_ST) {
        if (state === Watch.Osc) {
          // The `C2` before it was taken as payload: it is the terminator's first byte.
          if (this.#titleLength > 0) this.#titleLength -= 1
          this.#endOsc()
        }
        if (state === Watch.Osc || state === Watch.ControlString) state = Watch.Ground
        answering = false
      } else if (c1 !== -1 && C1_IGNORED_STRINGS.has(c1)) {
        state = Watch.ControlString
        answering = false
      } else
        switch (state) {
          case Watch.Escape:
            // C0 controls inside a sequence are executed without leaving it.
            if (byte < 0x20 || byte === 0x7f) break
            state = this.#afterEscape(byte)
            // `ESC P` opens a DCS (DECRQSS is answered); any other byte ends the string ESC closed.
            answering = byte === 0x50
            asks ||= answering
            break
          case Watch.EscapeIntermediate:
            if (byte >= 0x30 && byte <= 0x7e) state = Watch.Ground
            break
          case Watch.Csi:
            if (byte >= 0x40 && byte <= 0x7e) {
              if (ANSWERED_CSI_FINALS.has(byte)) asks = true
              this.#endCsi(byte)
              state = Watch.Ground
            } else this.#csiByte(byte)
            break
          case Watch.Osc:
            if (byte === BEL) {
              this.#endOsc()
              state = Watch.Ground
              answering = false
            } else {
              if (byte === QUESTION) answering = asks = true
              this.#oscByte(byte)
            }
            break
          default:
          // Ground and control strings: nothing else changes the state.
        }
    }
    this.#state = state
    this.#afterC1Lead = afterC1Lead
    this.#answering = answering
    this.#groundFrom = groundFrom
    return asks
  }

  /** The state after ESC and `byte` (0x20 or above): a sequence opener, an intermediate, or a two-byte sequence (ground). */
  #afterEscape(byte: number): Watch {
    switch (byte) {
      case 0x5b: // `[`
        this.#startCsi()
        return Watch.Csi
      case 0x5d: // `]`
        this.#startOsc()
        return Watch.Osc
      case 0x50: // P X ^ _
      case 0x58:
      case 0x5e:
      case 0x5f:
        return Watch.ControlString
      case 0x3d: // `=`: DECKPAM
      case 0x3e: // `>`: DECKPNM
        this.settings.setKeypad(byte === 0x3d)
        return Watch.Ground
      case 0x63: // `c`: RIS
        this.settings.resetModes()
        return Watch.Ground
      default:
        return byte <= 0x2f ? Watch.EscapeIntermediate : Watch.Ground
    }
  }

  #startCsi(): void {
    this.#private = false
    this.#csiStarted = false
    this.#bang = false
    this.#parameters.length = 0
    this.#parameter = -1
  }

  /** A parameter, marker or intermediate byte of a CSI sequence. */
  #csiByte(byte: number): void {
    const first = !this.#csiStarted
    this.#csiStarted = true
    if (byte >= 0x30 && byte <= 0x39) this.#parameter = Math.min(Math.max(this.#parameter, 0) * 10 + (byte - 0x30), 1e6)
    else if (byte === SEMICOLON || byte === 0x3a) this.#pushParameter()
    else if (byte === QUESTION && first) this.#private = true
    else if (byte === 0x21) this.#bang = true
  }

  #pushParameter(): void {
    if (this.#parameters.length < MAX_MODE_PARAMETERS) this.#parameters.push(this.#parameter)
    this.#parameter = -1
  }

  /** The final byte of a CSI sequence: mode changes and DECSTR reach the kept settings. */
  #endCsi(final: number): void {
    if (this.#bang) {
      if (final === 0x70) this.settings.resetModes() // `CSI ! p`: DECSTR
      return
    }
    if (!this.#private || (final !== 0x68 && final !== 0x6c)) return
    this.#pushParameter()
    for (const mode of this.#parameters) this.settings.setMode(mode, final === 0x68)
  }

  #startOsc(): void {
    this.#oscNumber = -1
    this.#titleLength = -1
  }

  /** One payload byte of an OSC string: its number first, then a title's bytes. */
  #oscByte(byte: number): void {
    const number = this.#oscNumber
    if (number !== -2) {
      if (byte >= 0x30 && byte <= 0x39) {
        this.#oscNumber = Math.min(Math.max(number, 0) * 10 + (byte - 0x30), 1e6)
        return
      }
      // The number ends at `;`: OSC 0 and OSC 2 set the title.
      this.#oscNumber = -2
      if (byte === SEMICOLON && (number === 0 || number === 2)) this.#titleLength = 0
      return
    }
    if (this.#titleLength < 0) return
    if (this.#titleLength === MAX_KEPT_TITLE_BYTES) this.#titleLength = -1
    else this.#title[this.#titleLength++] = byte
  }

  /** An OSC string ended: a title it set is kept. */
  #endOsc(): void {
    if (this.#titleLength >= 0) this.settings.setTitle(this.#title.subarray(0, this.#titleLength))
    this.#oscNumber = -2
    this.#titleLength = -1
  }
}

/** Where `byte` next occurs in `bytes` from `from`, or the length when it does not. */
function indexOrEnd(bytes: Uint8Array, byte: number, from: number): number {
  const found = bytes.indexOf(byte, from)
  return found === -1 ? bytes.length : found
}
