/** Characters of a peer's string that an error message or a log line quotes at most. */
export const QUOTED_CHARACTERS = 64

/**
 * How an error message or a log line names a value that came from the peer: numbers, booleans and
 * null as they are, strings JSON-quoted and cut to {@link QUOTED_CHARACTERS}, arrays and objects by
 * kind only. It never recurses into the value and never grows with it, so no frame can make its
 * own answer too large for a frame, or its description overflow the stack.
 */
export function describePeerValue(value: unknown): string {
  if (typeof value === 'string') {
    if (value.length <= QUOTED_CHARACTERS) return JSON.stringify(value)
    return `${JSON.stringify(value.slice(0, QUOTED_CHARACTERS))}… (${value.length} characters)`
  }
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value)
  if (value === undefined) return 'nothing'
  return Array.isArray(value) ? 'an array' : `a value of type ${typeof value}`
}

/** Characters of an error frame's message from the peer that are kept. */
export const KEPT_MESSAGE_CHARACTERS = 4096

/**
 * The text of a field the peer sends as text (an error frame's code and message): kept as it is
 * when it is a string, cut to `max` characters; anything else described by {@link describePeerValue}.
 */
export function peerText(value: unknown, max: number = KEPT_MESSAGE_CHARACTERS): string {
  return typeof value === 'string' ? value.slice(0, max) : describePeerValue(value)
}
