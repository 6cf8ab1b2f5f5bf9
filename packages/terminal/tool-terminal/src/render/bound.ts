import { textContent, truncateUtf8Head, truncateUtf8Tail, utf8ByteLength, type FittedText, type ToolContent } from 'dsh-tools'

/** The one line that tells the model a result lost bytes; it appears at most once, always last. */
export const TRUNCATION_MARKER = '[output truncated]'

/** The line that introduces output the session printed between the previous result and this one. */
export const EARLIER_MARKER = '[earlier output, printed after the previous result]'

/** A metadata line of a result; `optional` lines are the first thing dropped under a tiny cap. */
export interface MetaLine {
  text: string
  /** Dropped (before any required line is cut) when the cap cannot hold every line. */
  optional?: boolean
}

/**
 * How a result is built, so a cap knows what to keep: the head (ids) and trailer (status lines) stay
 * whole, the body gives up its oldest bytes first.
 */
export interface ResultLayout {
  /** Leading metadata kept whole, e.g. `started terminal session pty-1 (main) [type: shell]`. */
  head?: string
  /** A shorter head that still carries the ids, used when the cap cannot hold the full one. */
  compactHead?: string
  /** Terminal output; under a cap only its tail survives. An empty body takes no line. */
  body: string
  /**
   * Output printed before `body` that no earlier result showed; rendered first under
   * {@link EARLIER_MARKER}. Under a cap `body` keeps priority: this gets only the bytes left, its tail.
   */
  earlier?: string
  /** Trailing metadata lines, e.g. `[wait: stdin_read]`, kept whole. */
  trailer?: readonly MetaLine[]
  /** The body already lost bytes upstream (a backend bound): the marker is shown even without a cut. */
  truncated?: boolean
}

/**
 * Render a layout within `maxBytes` UTF-8 bytes: head, the tail of the body, the trailer, then
 * exactly one {@link TRUNCATION_MARKER} when anything was lost. Under a cap the body shrinks first;
 * when the metadata alone is too big, optional lines go, then the head becomes its compact form, and
 * only then is the metadata itself cut (keeping its beginning, where the ids are).
 */
export function fitResult(layout: ResultLayout, maxBytes: number): FittedText {
  const lines = layout.trailer ?? []
  const truncated = layout.truncated === true
  const earlier = layout.earlier ?? ''
  const whole = compose(layout.head, withEarlier(earlier, layout.body), lines, truncated)
  if (utf8ByteLength(whole) <= maxBytes) return { text: whole, truncated }

  const required = lines.filter((line) => !line.optional)
  const attempts: [string | undefined, readonly MetaLine[]][] = [[layout.head, lines]]
  if (required.length < lines.length) attempts.push([layout.head, required])
  if (layout.compactHead !== undefined) attempts.push([layout.compactHead, required])
  for (const [head, kept] of attempts) {
    const fixed = utf8ByteLength(compose(head, '', kept, true))
    if (fixed > maxBytes) continue
    // The body sits between head and trailer and costs one separating newline.
    const budget = maxBytes - fixed - 1
    const body = budget > 0 ? truncateUtf8Tail(layout.body, budget) : ''
    // Earlier output gets what the newest output left: its marker line, a newline each side, its tail.
    const room = budget - utf8ByteLength(body) - utf8ByteLength(EARLIER_MARKER) - 2
    const older = earlier !== '' && body !== '' && room > 0 ? truncateUtf8Tail(earlier, room) : ''
    return { text: compose(head, withEarlier(older, body), kept, true), truncated: true }
  }

  const separator = `\n${TRUNCATION_MARKER}`
  const metadata = compose(layout.compactHead ?? layout.head, '', required, false)
  const room = Math.max(0, maxBytes - utf8ByteLength(separator))
  return { text: truncateUtf8Head(metadata, room) + separator, truncated: true }
}

/**
 * The last-mile cap a tool's `finalizeContent` applies to whatever reaches the model: pipeline errors,
 * and any single text a later step replaced. Our own results were fitted by {@link fitResult} already
 * and pass unchanged; a deliberately multi-block content is left alone.
 */
export function boundContent(content: ToolContent[], maxBytes: number): ToolContent[] {
  if (content.length !== 1) return content
  const text = content[0]!.text
  if (utf8ByteLength(text) <= maxBytes) return content
  // Unknown text: its first line is the metadata (`Error: …`), the rest is output.
  const alreadyMarked = text.endsWith(`\n${TRUNCATION_MARKER}`)
  const unmarked = alreadyMarked ? text.slice(0, -TRUNCATION_MARKER.length - 1) : text
  const newline = unmarked.indexOf('\n')
  const layout: ResultLayout =
    newline < 0
      ? { head: unmarked, body: '', truncated: alreadyMarked }
      : { head: unmarked.slice(0, newline), body: unmarked.slice(newline + 1), truncated: alreadyMarked }
  return [textContent(fitResult(layout, maxBytes).text)]
}

/** `body` preceded by the earlier output under its marker line, when there is any. */
function withEarlier(earlier: string, body: string): string {
  if (earlier === '') return body
  const ended = earlier.endsWith('\n') ? earlier.slice(0, -1) : earlier
  return `${EARLIER_MARKER}\n${ended}\n${body}`
}

/** Join the present parts with newlines; an empty body and an absent head take no line. */
function compose(head: string | undefined, body: string, lines: readonly MetaLine[], marker: boolean): string {
  const parts: string[] = []
  if (head !== undefined) parts.push(head)
  if (body !== '') parts.push(body)
  for (const line of lines) parts.push(line.text)
  if (marker) parts.push(TRUNCATION_MARKER)
  return parts.join('\n')
}
