const PREFIX = [0x31, 0x33, 0x33, 0x3b, 0x44] // "133;D"
const CONTINUATION_PREFIX = [0x31, 0x33, 0x33, 0x3b, 0x41, 0x3b, 0x6b, 0x3d, 0x63] // "133;A;k=c"

/**
 * Recognize the controlled prompt's OSC payload `133;D[;<status>[;…]]`.
 * Returns the status field as a number (null when absent, not decimal, or longer than nine
 * digits), or undefined when the payload is some other OSC.
 */
export function parsePromptMarker(payload: Uint8Array, length: number): number | null | undefined {
  return parseNumbered(PREFIX, payload, length)
}

/**
 * Recognize the continuation prompt's OSC payload `133;A;k=c[;<nonce>]` (a secondary prompt in
 * the semantic-prompt convention), printed by PS2. Returns its number as {@link parsePromptMarker}
 * returns a status.
 */
export function parseContinuationMarker(payload: Uint8Array, length: number): number | null | undefined {
  return parseNumbered(CONTINUATION_PREFIX, payload, length)
}

/** `<prefix>[;<up to nine digits>[;…]]`: the number, null without a valid one, undefined for another payload. */
function parseNumbered(prefix: readonly number[], payload: Uint8Array, length: number): number | null | undefined {
  if (length < prefix.length) return undefined
  for (let index = 0; index < prefix.length; index++) if (payload[index] !== prefix[index]) return undefined
  if (length === prefix.length) return null
  if (payload[prefix.length] !== 0x3b) return undefined
  let status = 0
  let digits = 0
  for (let index = prefix.length + 1; index < length; index++) {
    const byte = payload[index] as number
    if (byte === 0x3b) break
    if (byte < 0x30 || byte > 0x39 || digits === 9) return null
    status = status * 10 + (byte - 0x30)
    digits += 1
  }
  return digits === 0 ? null : status
}
