import { type FittedText, keepUtf8Head, keepUtf8Tail, utf8ByteLength } from 'dsh-basics'
import { type OutputGap, type OutputShape, FoldedOutput, textContent, type ToolContent } from 'dsh-tools'

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
  /**
   * Terminal output. Runs of identical lines fold; under a cap its head and tail survive around one
   * line that says what was left out. An empty body takes no line (or shows `emptyBody`).
   */
  body: string
  /** Shown instead of an empty body, e.g. `(no new output)`; not output, so it is never counted. */
  emptyBody?: string
  /**
   * Lines right before the body (after any earlier output), kept whole like the head, e.g. the
   * `[screen: …]` line over a screen's rows.
   */
  bodyHead?: string
  /** False keeps every body line unfolded (a screen's rows are positions); default true when shaping folds. */
  foldBody?: boolean
  /** Absolute scrollback number of the body's first line, so an elision can name where its lines are. */
  bodyFirstLine?: number
  /** Lines missing from the body (a backend kept its beginning and end only): always left out, and counted. */
  bodyGap?: OutputGap
  /** The call that returns scrollback lines `fromLine … fromLine+count−1` (`bytes` in all), quoted in an elision line. */
  readCall?: (fromLine: number, count: number, bytes: number) => string
  /** The oldest scrollback line still kept: an elision names `readCall` only for left-out lines from here on. */
  oldestLine?: number
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

/** How output bodies are shaped besides the byte cap (results without it keep their body's tail). */
export interface ShapingOptions {
  /** Fold runs of identical lines (the config's `foldRepeatedLines`). */
  foldRepeats: boolean
}

/** A fitted result and how its output was shaped, for the result's meta. */
export interface FittedResult extends FittedText {
  /** The body as shaped: its size in lines and bytes and what was folded or left out. */
  output: OutputShape
  /** The earlier output as shaped, when the layout had some. */
  earlier?: OutputShape
}

/** Large enough that nothing is ever cut: shaping with it only folds. */
const UNBOUNDED = Number.MAX_SAFE_INTEGER

/** The shape of no output at all (an empty body shown as its placeholder counts as nothing). */
const NOTHING: OutputShape = { text: '', lines: 0, bytes: 0, shownBytes: 0, omittedLines: 0, omittedBytes: 0, foldedLines: 0, truncated: false }

/**
 * Render a layout within `maxBytes` UTF-8 bytes: head, the (earlier output and) body under its
 * `bodyHead`, the trailer,
 * then exactly one {@link TRUNCATION_MARKER} when anything was lost. With `shaping` (program output)
 * bodies fold repeated lines, and under a cap keep their head and tail around one elision line
 * (naming the read call for the middle when the lines are numbered); without it a body under a cap
 * keeps its tail. When the metadata alone is too big, optional lines go,
 * then the head becomes its compact form, and only then is the metadata itself cut (keeping its
 * beginning, where the ids are).
 */
export function fitResult(layout: ResultLayout, maxBytes: number, shaping?: ShapingOptions): FittedResult {
  const lines = layout.trailer ?? []
  const truncated = layout.truncated === true
  const placeholder = layout.body === '' && layout.emptyBody !== undefined
  const bodySource = placeholder ? (layout.emptyBody as string) : layout.body
  const numbered = !placeholder && layout.bodyFirstLine !== undefined
  const framed = (body: string) => (layout.bodyHead === undefined ? body : body === '' ? layout.bodyHead : `${layout.bodyHead}\n${body}`)
  // Program output is split, measured and folded once; each budget tried below only picks a window.
  const foldedBody = shaping
    ? new FoldedOutput(bodySource, {
        foldRepeats: shaping.foldRepeats && layout.foldBody !== false,
        ...(!placeholder && layout.bodyGap ? { gap: layout.bodyGap } : {}),
      })
    : undefined
  const foldedEarlier = shaping && layout.earlier ? new FoldedOutput(layout.earlier, { foldRepeats: shaping.foldRepeats }) : undefined
  const shapeBody = (budget: number) =>
    foldedBody
      ? foldedBody.shape({
          maxBytes: budget,
          ...(numbered ? { firstLine: layout.bodyFirstLine } : {}),
          ...(numbered && layout.readCall ? { readCall: layout.readCall } : {}),
          ...(numbered && layout.oldestLine !== undefined ? { oldestLine: layout.oldestLine } : {}),
        })
      : tailOf(bodySource, budget)
  const shapeEarlier = (budget: number) => (foldedEarlier ? foldedEarlier.shape({ maxBytes: budget }) : tailOf(layout.earlier ?? '', budget))
  const result = (text: string, lost: boolean, body: OutputShape, earlier: OutputShape | undefined): FittedResult => {
    const output = placeholder ? NOTHING : body
    return earlier && layout.earlier ? { text, truncated: lost, output, earlier } : { text, truncated: lost, output }
  }

  // A body that alone exceeds the cap cannot be shown whole: skip joining it.
  if (!foldedBody || foldedBody.foldedBytes <= maxBytes) {
    const body = shapeBody(UNBOUNDED)
    const earlier = layout.earlier ? shapeEarlier(UNBOUNDED) : undefined
    const whole = compose(layout.head, withEarlier(earlier?.text ?? '', framed(body.text)), lines, truncated)
    if (utf8ByteLength(whole) <= maxBytes) return result(whole, truncated, body, earlier)
  }

  const required = lines.filter((line) => !line.optional)
  const attempts: [string | undefined, readonly MetaLine[]][] = [[layout.head, lines]]
  if (required.length < lines.length) attempts.push([layout.head, required])
  if (layout.compactHead !== undefined) attempts.push([layout.compactHead, required])
  for (const [head, kept] of attempts) {
    const fixed = utf8ByteLength(compose(head, framed(''), kept, true))
    if (fixed > maxBytes) continue
    // The body sits between head and trailer and costs one separating newline.
    const budget = maxBytes - fixed - 1
    const body = shapeBody(Math.max(0, budget))
    // Earlier output gets what the newest output left: its marker line, a newline each side.
    const room = budget - body.shownBytes - utf8ByteLength(EARLIER_MARKER) - 2
    const older = layout.earlier ? shapeEarlier(body.text !== '' && room > 0 ? room : 0) : undefined
    return result(compose(head, withEarlier(older?.text ?? '', framed(body.text)), kept, true), true, body, older)
  }

  const separator = `\n${TRUNCATION_MARKER}`
  const metadata = compose(layout.compactHead ?? layout.head, framed(''), required, false)
  const room = Math.max(0, maxBytes - utf8ByteLength(separator))
  return result(keepUtf8Head(metadata, room) + separator, true, shapeBody(0), layout.earlier ? shapeEarlier(0) : undefined)
}

/** Without shaping (results that are not program output: a list, an acknowledgement), a body keeps its tail. */
function tailOf(text: string, budget: number): OutputShape {
  const bytes = utf8ByteLength(text)
  const kept = budget >= bytes ? text : keepUtf8Tail(text, budget)
  const shownBytes = kept === text ? bytes : utf8ByteLength(kept)
  const lines = text === '' ? 0 : text.split('\n').length
  const shownLines = kept === '' ? 0 : kept.split('\n').length
  return {
    text: kept,
    lines,
    bytes,
    shownBytes,
    foldedLines: 0,
    omittedLines: lines - shownLines,
    omittedBytes: bytes - shownBytes,
    truncated: shownBytes < bytes,
  }
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
