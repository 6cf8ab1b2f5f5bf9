import { BYTE_CLASS_COUNT, BYTE_CLASSES, ByteClass } from './byte-classes'

/** Parser states (plain numbers: they index the transition table). */
export const State = {
  /** Text; the only state whose runs of plain text take the sanitizer's fast path. */
  Ground: 0,
  /** Inside a UTF-8 sequence split across chunks (or broken): bytes go to the decoder one by one. */
  Utf8: 1,
  /** After ESC. */
  Escape: 2,
  /** After ESC and an intermediate byte (charset designations, `ESC # 8`, …): ends at any final. */
  EscapeIntermediate: 3,
  /** After `ESC [` or 0x9B, before any parameter byte: `?` here is the DEC private marker. */
  CsiEntry: 4,
  /** Reading a CSI sequence's parameters. */
  CsiParameters: 5,
  /** A CSI sequence no line renderer models (intermediates, other markers): read to its final, unapplied. */
  CsiIgnore: 6,
  /** An OSC string: its payload is kept (bounded) since it may be a prompt marker. */
  OscString: 7,
  /** ESC inside an OSC string: `\` terminates it, anything else aborts it and starts a new sequence. */
  OscStringEscape: 8,
  /** A DCS, SOS, PM or APC string: dropped unread. */
  IgnoredString: 9,
  /** ESC inside an ignored string. */
  IgnoredStringEscape: 10,
} as const
/** One of {@link State}. */
export type State = (typeof State)[keyof typeof State]

/** What the sanitizer does with a byte on a transition (plain numbers: the hot loop switches on them). */
export const Action = {
  /** Nothing: the byte only moves the state (or vanishes). */
  Ignore: 0,
  /** Write the byte as a character (printable ASCII, TAB). */
  Print: 1,
  /** A UTF-8 lead byte in ground: a complete sequence, a broken one (U+FFFD), or the start of a split one. */
  Utf8Lead: 2,
  /** The next byte of a split UTF-8 sequence; the decoder's verdict picks the next state. */
  Utf8Continue: 3,
  /** A byte no UTF-8 sequence starts with: U+FFFD. */
  Replace: 4,
  /** LF, VT, FF, `ESC E`: complete the line. */
  NewLine: 5,
  /** CR: cursor to column 0. */
  CarriageReturn: 6,
  /** BS: cursor one column left. */
  Backspace: 7,
  /** `ESC M`: the cursor's row moves up one. */
  ReverseIndex: 8,
  /** `ESC [` or 0x9B: a new CSI sequence. */
  CsiStart: 9,
  /** A parameter digit. */
  CsiDigit: 10,
  /** `;` or `:`: the next parameter. */
  CsiSeparator: 11,
  /** `?` first: a DEC private mode sequence. */
  CsiPrivate: 12,
  /** The final byte: apply the sequence. */
  CsiDispatch: 13,
  /** `ESC ]`: a new OSC payload. */
  OscStart: 14,
  /** One OSC payload byte. */
  OscPut: 15,
  /** BEL or ST ends an OSC string: it may be a prompt marker. */
  OscEnd: 16,
} as const
/** One of {@link Action}. */
export type Action = (typeof Action)[keyof typeof Action]

/** A table entry is `action << ACTION_SHIFT | next state`. */
export const ACTION_SHIFT = 4
/** Mask of the next state in a table entry. */
export const STATE_MASK = (1 << ACTION_SHIFT) - 1
/** A state's row starts at `state << ROW_SHIFT`: one entry per byte value. */
export const ROW_SHIFT = 8
/** Rows of the grammar, by byte class, are padded to a power of two. */
const CLASS_ROW_SHIFT = 5

/** The entry of every byte that is plain text in ground: the fast path runs while bytes map to it. */
export const PRINT_IN_GROUND = (Action.Print << ACTION_SHIFT) | State.Ground

/** Number of states: the table's rows (derived, so a new state always gets a row). */
const STATE_COUNT = Object.keys(State).length
/** Marks a (state, class) pair the grammar forgot: building the table fails rather than ignore it. */
const UNSET = 0xffff
const ALL_CLASSES: readonly ByteClass[] = Array.from({ length: BYTE_CLASS_COUNT }, (_, index) => index as ByteClass)
/** 0x20–0x7E, split by what they mean inside sequences. */
const SEQUENCE_BYTES: readonly ByteClass[] = ALL_CLASSES.filter((byteClass) => byteClass <= ByteClass.StringTerminator)
const PARAMETER_BYTES: readonly ByteClass[] = [ByteClass.Digit, ByteClass.Separator, ByteClass.OtherMarker, ByteClass.PrivateMarker]
const FINAL_BYTES: readonly ByteClass[] = SEQUENCE_BYTES.filter((byteClass) => byteClass >= ByteClass.Final)
const HIGH_BYTES: readonly ByteClass[] = [ByteClass.C1Csi, ByteClass.C1Ignored, ByteClass.NotLead, ByteClass.Utf8Lead]

/**
 * `[state][byte class] → action, next state`, the whole grammar of the sanitizer in one place,
 * expanded to one entry per byte value (as xterm.js does) so the hot loop needs a single lookup:
 * `TRANSITIONS[(state << ROW_SHIFT) | byte]` is the entry of `BYTE_CLASSES[byte]` in `state`.
 */
export const TRANSITIONS: Uint16Array = expandByByte(buildTransitions())

/** Inclusive range of byte values that share one table entry in one state. */
export interface ByteSpan {
  /** First byte of the span. */
  readonly first: number
  /** Last byte of the span (inclusive). */
  readonly last: number
}

/**
 * The longest span of byte values that all print in ground (0x20–0x7E), read off the table: the fast
 * path tests a byte against it with two comparisons and asks the table itself about any other byte.
 */
export const GROUND_TEXT_SPAN: ByteSpan = longestSpan(State.Ground, PRINT_IN_GROUND)

/** The span of UTF-8 lead bytes in ground (0xC2–0xF4), read off the table likewise for the text run. */
export const GROUND_LEAD_SPAN: ByteSpan = longestSpan(State.Ground, (Action.Utf8Lead << ACTION_SHIFT) | State.Ground)

/** The longest span of CSI parameter digits, read off the table likewise for the parameters' fast path. */
export const CSI_DIGIT_SPAN: ByteSpan = longestSpan(State.CsiParameters, (Action.CsiDigit << ACTION_SHIFT) | State.CsiParameters)

function longestSpan(state: State, entry: number): ByteSpan {
  let best = { first: 1, last: 0 }
  let first = 0
  for (let byte = 0; byte <= 256; byte++) {
    if (byte < 256 && TRANSITIONS[(state << ROW_SHIFT) | byte] === entry) continue
    if (byte - 1 - first > best.last - best.first) best = { first, last: byte - 1 }
    first = byte + 1
  }
  return best
}

function expandByByte(byClass: Uint16Array): Uint16Array {
  const table = new Uint16Array(STATE_COUNT << ROW_SHIFT)
  for (let state = 0; state < STATE_COUNT; state++) {
    for (let byte = 0; byte < 256; byte++) {
      const entry = byClass[(state << CLASS_ROW_SHIFT) | (BYTE_CLASSES[byte] as number)] as number
      if (entry === UNSET) throw new Error(`transition table: state ${state} has no entry for byte ${byte}`)
      table[(state << ROW_SHIFT) | byte] = entry
    }
  }
  return table
}

function buildTransitions(): Uint16Array {
  const table = new Uint16Array(STATE_COUNT << CLASS_ROW_SHIFT).fill(UNSET)
  const on = (state: State, classes: readonly ByteClass[], action: Action, next: State) => {
    for (const byteClass of classes) table[(state << CLASS_ROW_SHIFT) | byteClass] = (action << ACTION_SHIFT) | next
  }
  /** Bytes that `state` treats as `like` does (a sequence aborted by a byte that is then read again). */
  const as = (state: State, like: State, classes: readonly ByteClass[]) => {
    for (const byteClass of classes) table[(state << CLASS_ROW_SHIFT) | byteClass] = table[(like << CLASS_ROW_SHIFT) | byteClass] as number
  }
  /** C0 controls and DEL inside a sequence: executed (or ignored) without leaving it; ESC restarts, CAN/SUB abort. */
  const controls = (state: State) => {
    on(state, [ByteClass.Tab], Action.Print, state)
    on(state, [ByteClass.LineFeed], Action.NewLine, state)
    on(state, [ByteClass.CarriageReturn], Action.CarriageReturn, state)
    on(state, [ByteClass.Backspace], Action.Backspace, state)
    on(state, [ByteClass.Bell, ByteClass.IgnoredC0, ByteClass.Delete], Action.Ignore, state)
    on(state, [ByteClass.Escape], Action.Ignore, State.Escape)
    on(state, [ByteClass.Cancel], Action.Ignore, State.Ground)
  }

  // Ground: text, the rendered controls, and the ways into sequences. A raw 0x80–0x9F byte is a C1
  // control, of which only CSI is honoured (see the sanitizer's doc comment).
  on(State.Ground, [...SEQUENCE_BYTES, ByteClass.Tab], Action.Print, State.Ground)
  controls(State.Ground)
  on(State.Ground, [ByteClass.C1Csi], Action.CsiStart, State.CsiEntry)
  on(State.Ground, [ByteClass.C1Ignored], Action.Ignore, State.Ground)
  on(State.Ground, [ByteClass.NotLead], Action.Replace, State.Ground)
  on(State.Ground, [ByteClass.Utf8Lead], Action.Utf8Lead, State.Ground)

  on(State.Utf8, ALL_CLASSES, Action.Utf8Continue, State.Utf8)

  // Escape sequences; a byte 0x80 or above aborts one and is read as in ground.
  on(State.Escape, SEQUENCE_BYTES, Action.Ignore, State.Ground)
  on(State.Escape, [ByteClass.Intermediate], Action.Ignore, State.EscapeIntermediate)
  on(State.Escape, [ByteClass.CsiOpener], Action.CsiStart, State.CsiEntry)
  on(State.Escape, [ByteClass.OscOpener], Action.OscStart, State.OscString)
  on(State.Escape, [ByteClass.StringOpener], Action.Ignore, State.IgnoredString)
  on(State.Escape, [ByteClass.NextLine], Action.NewLine, State.Ground)
  on(State.Escape, [ByteClass.ReverseIndex], Action.ReverseIndex, State.Ground)
  controls(State.Escape)
  as(State.Escape, State.Ground, HIGH_BYTES)

  on(State.EscapeIntermediate, SEQUENCE_BYTES, Action.Ignore, State.Ground)
  on(State.EscapeIntermediate, [ByteClass.Intermediate], Action.Ignore, State.EscapeIntermediate)
  controls(State.EscapeIntermediate)
  as(State.EscapeIntermediate, State.Ground, HIGH_BYTES)

  // CSI: once a byte says the sequence is not one a line renderer applies, it is read to its end unapplied.
  for (const state of [State.CsiEntry, State.CsiParameters, State.CsiIgnore]) {
    controls(state)
    as(state, State.Ground, HIGH_BYTES)
  }
  for (const state of [State.CsiEntry, State.CsiParameters]) {
    on(state, [ByteClass.Digit], Action.CsiDigit, State.CsiParameters)
    on(state, [ByteClass.Separator], Action.CsiSeparator, State.CsiParameters)
    on(state, [ByteClass.Intermediate, ByteClass.OtherMarker, ByteClass.PrivateMarker], Action.Ignore, State.CsiIgnore)
    on(state, FINAL_BYTES, Action.CsiDispatch, State.Ground)
  }
  on(State.CsiEntry, [ByteClass.PrivateMarker], Action.CsiPrivate, State.CsiParameters)
  on(State.CsiIgnore, [ByteClass.Intermediate, ...PARAMETER_BYTES], Action.Ignore, State.CsiIgnore)
  on(State.CsiIgnore, FINAL_BYTES, Action.Ignore, State.Ground)

  // Control strings: every byte but BEL, ESC, CAN and SUB is payload (a UTF-8 title may contain 0x9C).
  on(State.OscString, ALL_CLASSES, Action.OscPut, State.OscString)
  on(State.IgnoredString, ALL_CLASSES, Action.Ignore, State.IgnoredString)
  for (const [string, stringEscape, end] of [
    [State.OscString, State.OscStringEscape, Action.OscEnd],
    [State.IgnoredString, State.IgnoredStringEscape, Action.Ignore],
  ] as const) {
    on(string, [ByteClass.Bell], end, State.Ground)
    on(string, [ByteClass.Escape], Action.Ignore, stringEscape)
    on(string, [ByteClass.Cancel], Action.Ignore, State.Ground)
    // After ESC: `\` terminates the string; any other byte aborts it and is read as after ESC.
    as(stringEscape, State.Escape, ALL_CLASSES)
    on(stringEscape, [ByteClass.StringTerminator], end, State.Ground)
  }
  return table
}
