/**
 * The byte classes of the sanitizer's state machine: every byte value falls in exactly one, and two
 * bytes share a class only when no state treats them differently. Plain numbers, so the hot loop
 * indexes typed arrays with them.
 */
export const ByteClass = {
  /** 0x20–0x2F: text in ground, an intermediate in an escape or CSI sequence. */
  Intermediate: 0,
  /** 0x30–0x39: text; a CSI parameter digit; an escape final. */
  Digit: 1,
  /** `:` `;`: text; a CSI parameter separator; an escape final. */
  Separator: 2,
  /** `<` `=` `>`: text; a CSI private marker no line renderer models; an escape final. */
  OtherMarker: 3,
  /** `?`: text; the DEC private marker when it opens a CSI sequence; an escape final. */
  PrivateMarker: 4,
  /** 0x40–0x7E not named below: text, or the final byte of an escape or CSI sequence. */
  Final: 5,
  /** `[`: after ESC opens a CSI sequence. */
  CsiOpener: 6,
  /** `]`: after ESC opens an OSC string. */
  OscOpener: 7,
  /** `P` `X` `^` `_`: after ESC opens a DCS, SOS, PM or APC string (dropped unread). */
  StringOpener: 8,
  /** `E`: after ESC, NEL (next line). */
  NextLine: 9,
  /** `M`: after ESC, RI (reverse index, one row up). */
  ReverseIndex: 10,
  /** `\`: after ESC, ST (the string terminator). */
  StringTerminator: 11,
  /** HT: kept as one character. */
  Tab: 12,
  /** LF, VT, FF: complete the line. */
  LineFeed: 13,
  /** CR: back to column 0. */
  CarriageReturn: 14,
  /** BS: one column left. */
  Backspace: 15,
  /** BEL: no rendered form, but it ends a control string. */
  Bell: 16,
  /** The other C0 controls (NUL, SO, SI, …): no rendered form anywhere. */
  IgnoredC0: 17,
  /** ESC: starts an escape sequence. */
  Escape: 18,
  /** CAN, SUB: abort any sequence or string. */
  Cancel: 19,
  /** DEL: ignored everywhere outside control strings. */
  Delete: 20,
  /** 0x9B: the 8-bit CSI, the only C1 control honoured. */
  C1Csi: 21,
  /** 0x80–0x9F but 0x9B: other C1 controls (dropped), or UTF-8 continuation bytes. */
  C1Ignored: 22,
  /** 0xA0–0xC1, 0xF5–0xFF: no UTF-8 sequence starts here (U+FFFD), or continuation bytes. */
  NotLead: 23,
  /** 0xC2–0xF4: the lead byte of a UTF-8 sequence. */
  Utf8Lead: 24,
} as const
/** One of {@link ByteClass}. */
export type ByteClass = (typeof ByteClass)[keyof typeof ByteClass]

/** Number of byte classes: the width of one state's row in the transition table. */
export const BYTE_CLASS_COUNT = Object.keys(ByteClass).length

/** The class of each byte value 0–255. */
export const BYTE_CLASSES: Uint8Array = classifyBytes()

function classifyBytes(): Uint8Array {
  const classes = new Uint8Array(256).fill(ByteClass.IgnoredC0)
  const range = (first: number, last: number, byteClass: ByteClass) => classes.fill(byteClass, first, last + 1)
  const each = (bytes: string, byteClass: ByteClass) => {
    for (const byte of bytes) classes[byte.charCodeAt(0)] = byteClass
  }
  range(0x20, 0x2f, ByteClass.Intermediate)
  range(0x30, 0x39, ByteClass.Digit)
  each(':;', ByteClass.Separator)
  each('<=>', ByteClass.OtherMarker)
  each('?', ByteClass.PrivateMarker)
  range(0x40, 0x7e, ByteClass.Final)
  each('[', ByteClass.CsiOpener)
  each(']', ByteClass.OscOpener)
  each('PX^_', ByteClass.StringOpener)
  each('E', ByteClass.NextLine)
  each('M', ByteClass.ReverseIndex)
  each('\\', ByteClass.StringTerminator)
  each('\t', ByteClass.Tab)
  each('\n\v\f', ByteClass.LineFeed)
  each('\r', ByteClass.CarriageReturn)
  each('\b', ByteClass.Backspace)
  each('\x07', ByteClass.Bell)
  each('\x1b', ByteClass.Escape)
  each('\x18\x1a', ByteClass.Cancel)
  each('\x7f', ByteClass.Delete)
  range(0x80, 0x9f, ByteClass.C1Ignored)
  each('\x9b', ByteClass.C1Csi)
  range(0xa0, 0xff, ByteClass.NotLead)
  range(0xc2, 0xf4, ByteClass.Utf8Lead)
  return classes
}
