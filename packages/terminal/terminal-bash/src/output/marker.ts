const PREFIX = [0x31, 0x33, 0x33, 0x3b, 0x44] // "133;D"

/**
 * Recognize the controlled prompt's OSC payload `133;D[;<status>[;…]]`.
 * Returns the status field as a number (null when absent, not decimal, or longer than nine
 * digits), or undefined when the payload is some other OSC.
 */
export function parsePromptMarker(payload: Uint8Array, length: number): number | null | undefined {
  if (length < PREFIX.length) return undefined
  for (let index = 0; index < PREFIX.length; index++) if (payload[index] !== PREFIX[index]) return undefined
  if (length === PREFIX.length) return null
  if (payload[PREFIX.length] !== 0x3b) return undefined
  let status = 0
  let digits = 0
  for (let index = PREFIX.length + 1; index < length; index++) {
    const byte = payload[index] as number
    if (byte === 0x3b) break
    if (byte < 0x30 || byte > 0x39 || digits === 9) return null
    status = status * 10 + (byte - 0x30)
    digits += 1
  }
  return digits === 0 ? null : status
}
