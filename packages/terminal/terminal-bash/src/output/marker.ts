import { Buffer } from 'node:buffer'
const PREFIX = [0x31, 0x33, 0x33, 0x3b, 0x44] // "133;D"
const CONTINUATION_PREFIX = [0x31, 0x33, 0x33, 0x3b, 0x41, 0x3b, 0x6b, 0x3d, 0x63] // "133;A;k=c"
const REPL_PREFIX = '133;A;k=r;'
const REPL_PAYLOAD = /^133;A;k=r;(\d{1,9});(\d{1,9});(\d{1,4});([A-Za-z0-9._-]{1,32})$/

/** What a REPL's prompt marker says: its nonce, the process that printed it, its prompt's length and its name. */
export interface ReplMarker {
  readonly nonce: number
  readonly pid: number
  readonly promptLength: number
  readonly name: string
}

/**
 * Recognize a REPL prompt's OSC payload `133;A;k=r;<nonce>;<pid>;<prompt length>;<name>` (the
 * Python startup file prints it before `sys.ps1` and `sys.ps2`); undefined for anything else.
 */
export function parseReplMarker(payload: Uint8Array, length: number): ReplMarker | undefined {
  if (length < REPL_PREFIX.length || payload[8] !== 0x72) return undefined
  const found = REPL_PAYLOAD.exec(Buffer.from(payload.buffer, payload.byteOffset, length).toString('latin1'))
  if (!found) return undefined
  return { nonce: Number(found[1]), pid: Number(found[2]), promptLength: Number(found[3]), name: found[4] as string }
}

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
