import { type FoldedLines, foldRepeatedLines } from './fold'
import { formatByteSize } from './size'
import { keepUtf8Tail, utf8ByteLength } from 'dsh-basics'
import { type HeadTailWindow, selectHeadTail } from './window'

/** How {@link shapeOutput} shapes one output text. */
export interface OutputShapeOptions {
  /** UTF-8 bytes the shaped text may take, its fold and elision lines included. */
  maxBytes: number
  /** Fold runs of identical lines (default true). */
  foldRepeats?: boolean
  /** Absolute number of the text's first line (e.g. a scrollback line number), so an elision can say which lines it left out. */
  firstLine?: number
  /**
   * The call that returns lines fromLine … fromLine+count−1 (`bytes` UTF-8 bytes with their newlines),
   * quoted in the elision line, e.g. `terminal_read {"sessionId":"pty-1","fromLine":21,"count":500}`.
   * Used only with firstLine.
   */
  readCall?: (fromLine: number, count: number, bytes: number) => string
  /**
   * The oldest line the read call can still return (lines before it were dropped by the source's
   * bound): an elision names the call only for the left-out lines from here on, and says how many
   * are gone. Used only with firstLine and readCall; without it, no line of the text is gone.
   */
  oldestLine?: number
  /**
   * Lines missing from `text` after its line `after` (0-based, before its last line), e.g. dropped by
   * an upstream byte bound between a kept head and a kept tail: `lines` of them, `bytes` UTF-8 bytes
   * with their newlines. They are always left out (inside the one elision) and counted in every size.
   */
  gap?: OutputGap
}

/** Lines missing from a shaped text (see {@link OutputShapeOptions.gap}). */
export interface OutputGap {
  after: number
  lines: number
  bytes: number
}

/** A shaped output and what it left out. */
export interface OutputShape {
  /** The shaped text: at most `maxBytes` UTF-8 bytes, ending with (the tail of) the input's last line when anything is shown. */
  text: string
  /** Lines ("\n"-separated; a text ending in "\n" has an empty last line) of the input. */
  lines: number
  /** UTF-8 bytes of the input. */
  bytes: number
  /** UTF-8 bytes of `text`. */
  shownBytes: number
  /** Input lines not shown because of the elision (a line cut to its tail counts as shown). */
  omittedLines: number
  /** UTF-8 bytes lost: the left-out lines with their newlines, plus the bytes cut from a line. */
  omittedBytes: number
  /** Input lines replaced by fold lines that are shown (a run of k identical lines folds k−1). */
  foldedLines: number
  /** The left-out lines as absolute numbers, when firstLine was given and something was elided. */
  omitted?: { fromLine: number; count: number }
  /** True when bytes were lost (elided or cut); folding alone is not a loss. */
  truncated: boolean
}

/** Tries at sizing the elision line before giving up on a variant (its text depends on what it leaves out). */
const MAX_ELISION_ATTEMPTS = 16

/**
 * What an elision line says: the left-out lines from input index `from`, `count` of them, `bytes` with
 * their newlines; `bytesOfLast(n)` is what the last `n` of them take (at most `bytes`).
 */
type DescribeElision = (from: number, count: number, bytes: number, bytesOfLast: (lines: number) => number) => string

/** The input split once and measured once, shared by every step. */
interface MeasuredText {
  text: string
  /** Lines missing after one of `lines`, counted in `bytes` and in every count of left-out lines. */
  gap: OutputGap | undefined
  lines: string[]
  lineBytes: Float64Array
  /** `offsets[i]`: UTF-8 bytes of lines 0 … i−1, newlines not included. */
  offsets: Float64Array
  bytes: number
}

/** A chosen window and its elision line. */
interface ElidedLayout {
  window: HeadTailWindow
  elision: string
  from: number
  count: number
  elidedBytes: number
}

/**
 * Turn an output text into a window a model can afford: repeated lines folded and, when still over
 * `maxBytes`, whole head and tail lines around one line that says what was left out and how to read it.
 * Pure, deterministic and linear in the input; see the package README for the line formats.
 */
export function shapeOutput(text: string, options: OutputShapeOptions): OutputShape {
  return new FoldedOutput(text, options).shape(options)
}

/** What {@link FoldedOutput.shape} needs besides the text: the budget and how to name left-out lines. */
export type OutputWindowOptions = Pick<OutputShapeOptions, 'maxBytes' | 'firstLine' | 'readCall' | 'oldestLine'>

/**
 * An output text split, measured and folded once, to be shaped for one or more budgets (a result
 * tries its full window first, then what its status lines leave): each shape costs the window, not the text.
 */
export class FoldedOutput {
  readonly #text: string
  readonly #options: Pick<OutputShapeOptions, 'foldRepeats' | 'gap'>
  #measured: MeasuredText | undefined
  #folded: FoldedLines | undefined
  /** UTF-8 bytes of the text with its repeats folded: what shaping without a budget shows. */
  readonly foldedBytes: number

  constructor(text: string, options: Pick<OutputShapeOptions, 'foldRepeats' | 'gap'> = {}) {
    this.#text = text
    this.#options = options
    // A text of at most two lines has nothing to fold (the last line never folds, a run needs two
    // lines before it) and no line a gap could follow: it is measured, not split, unless a budget cuts it.
    if (options.gap === undefined && !hasTwoNewlines(text)) {
      this.foldedBytes = utf8ByteLength(text)
      return
    }
    const folded = this.#fold()
    this.foldedBytes = sumOf(folded.bytes, folded.texts.length) + folded.texts.length - 1
  }

  /** The text split and measured once, its repeats folded (on first use: a short text that fits never needs it). */
  #fold(): FoldedLines {
    if (this.#folded) return this.#folded
    const measured = measure(this.#text, checkedGap(this.#options.gap, this.#text))
    this.#measured = measured
    // Repeats fold whether or not the text fits: a run of identical lines costs a model tokens either way.
    this.#folded = foldRepeatedLines(measured.lines, measured.lineBytes, this.#options.foldRepeats !== false, measured.gap?.after)
    return this.#folded
  }

  /** The text within `maxBytes` (see {@link shapeOutput}). */
  shape(options: OutputWindowOptions): OutputShape {
    const maxBytes = checkedBudget(options.maxBytes)
    const firstLine = options.firstLine
    if (firstLine !== undefined && !(Number.isSafeInteger(firstLine) && firstLine >= 0)) {
      throw new RangeError(`firstLine must be a non-negative integer, got ${firstLine}`)
    }
    if (!this.#folded && this.foldedBytes <= maxBytes) {
      const text = this.#text
      return {
        text,
        lines: newlines(text) + 1,
        bytes: this.foldedBytes,
        shownBytes: this.foldedBytes,
        omittedLines: 0,
        omittedBytes: 0,
        foldedLines: 0,
        truncated: false,
      }
    }
    const folded = this.#fold()
    const measured = this.#measured as MeasuredText
    const gap = measured.gap
    if (!gap && this.foldedBytes <= maxBytes) {
      const text = folded.foldedLines === 0 ? measured.text : folded.texts.join('\n')
      return {
        text,
        lines: lineCount(measured),
        bytes: measured.bytes,
        shownBytes: this.foldedBytes,
        omittedLines: 0,
        omittedBytes: 0,
        foldedLines: folded.foldedLines,
        truncated: false,
      }
    }
    const split = gap ? firstSlotAfter(folded, gap.after) : undefined
    const layout =
      (firstLine !== undefined &&
        options.readCall &&
        fitElision(folded, measured, maxBytes, describeWithCall(firstLine, options.readCall, options.oldestLine ?? firstLine), split)) ||
      fitElision(folded, measured, maxBytes, describePlain, split)
    return layout ? elidedShape(measured, folded, layout, firstLine) : tailShape(measured, maxBytes, firstLine)
  }
}

function checkedGap(gap: OutputGap | undefined, text: string): OutputGap | undefined {
  if (gap === undefined) return undefined
  const { after, lines, bytes } = gap
  if (![after, lines, bytes].every((value) => Number.isSafeInteger(value) && value >= 0)) {
    throw new RangeError(`gap must hold non-negative integers, got ${JSON.stringify(gap)}`)
  }
  let newlines = 0
  for (let at = text.indexOf('\n'); at >= 0 && newlines <= after; at = text.indexOf('\n', at + 1)) newlines++
  if (after >= newlines) throw new RangeError(`gap.after (${after}) must be a line before the text's last line`)
  // A gap of nothing leaves nothing out: the text is shaped as it is.
  return lines === 0 && bytes === 0 ? undefined : gap
}

function checkedBudget(maxBytes: number): number {
  if (typeof maxBytes !== 'number' || !Number.isFinite(maxBytes) || maxBytes < 0) {
    throw new RangeError(`maxBytes must be a finite non-negative number, got ${maxBytes}`)
  }
  return Math.floor(maxBytes)
}

function measure(text: string, gap: OutputGap | undefined): MeasuredText {
  const lines = text.split('\n')
  const lineBytes = new Float64Array(lines.length)
  for (let index = 0; index < lines.length; index++) lineBytes[index] = utf8ByteLength(lines[index]!)
  const offsets = new Float64Array(lines.length + 1)
  for (let index = 0; index < lines.length; index++) offsets[index + 1] = offsets[index]! + lineBytes[index]!
  return { text, gap, lines, lineBytes, offsets, bytes: offsets[lines.length]! + lines.length - 1 + (gap?.bytes ?? 0) }
}

function describePlain(_from: number, count: number, bytes: number): string {
  return `[… ${linesLeftOut(count, bytes)}]`
}

/**
 * An elision that names the read call for the left-out lines still kept (from `oldestLine` on): all
 * of them, the newer ones only (saying how many older ones are gone), or none when every one is gone.
 */
function describeWithCall(firstLine: number, readCall: NonNullable<OutputShapeOptions['readCall']>, oldestLine: number): DescribeElision {
  return (from, count, bytes, bytesOfLast) => {
    const start = firstLine + from
    const gone = Math.min(count, Math.max(0, oldestLine - start))
    if (gone === count) return `[… ${linesLeftOut(count, bytes)}; no longer kept (the session keeps lines from ${oldestLine} on)]`
    // A newline in the call would split the elision line in two; the call stays readable with a space.
    const call = readCall(start + gone, count - gone, gone === 0 ? bytes : bytesOfLast(count - gone)).replace(/\n/g, ' ')
    if (gone === 0) return `[… ${linesLeftOut(count, bytes)}; ${call} returns ${count === 1 ? 'it' : 'them'}]`
    const kept = count - gone
    return `[… ${linesLeftOut(count, bytes)}; the first ${gone} are no longer kept; ${call} returns the last ${kept === 1 ? 'one' : kept}]`
  }
}

function linesLeftOut(count: number, bytes: number): string {
  return `${count} ${count === 1 ? 'line' : 'lines'} (${formatByteSize(bytes)}) left out`
}

/**
 * The window and elision line that fit `maxBytes` together. The line's size depends on what it leaves
 * out, which depends on the room the line leaves: reserve the shortest line it could be (one line of one
 * byte), grow the reserve to the line's size until the line fits, then shrink it while the line still
 * fits. Undefined when no window fits, or no size settles within a few tries.
 */
function fitElision(folded: FoldedLines, measured: MeasuredText, maxBytes: number, describe: DescribeElision, split?: number): ElidedLayout | undefined {
  let reserve = utf8ByteLength(describe(0, 1, 1, () => 1))
  let best: ElidedLayout | undefined
  for (let attempt = 0; attempt < MAX_ELISION_ATTEMPTS; attempt++) {
    const window = selectHeadTail(folded, maxBytes - reserve, split)
    if (!window) return best
    const from = folded.starts[window.head]!
    const inputCount = folded.starts[window.tailStart]! - from
    const gap = measured.gap
    const count = inputCount + (gap?.lines ?? 0)
    const elidedBytes = measured.offsets[from + inputCount]! - measured.offsets[from]! + inputCount + (gap?.bytes ?? 0)
    // The last lines' bytes: exact while they all follow the missing lines (the gap); otherwise all of them, an upper bound.
    const end = from + inputCount
    const afterGap = gap ? end - Math.max(from, gap.after + 1) : inputCount
    const bytesOfLast = (lines: number) => (lines > afterGap ? elidedBytes : measured.offsets[end]! - measured.offsets[end - lines]! + lines)
    const elision = describe(from, count, elidedBytes, bytesOfLast)
    const elisionBytes = utf8ByteLength(elision)
    if (elisionBytes > reserve) {
      if (best) return best
    } else {
      best = { window, elision, from, count, elidedBytes }
      if (elisionBytes === reserve) return best
    }
    reserve = elisionBytes
  }
  return best
}

function elidedShape(measured: MeasuredText, folded: FoldedLines, layout: ElidedLayout, firstLine: number | undefined): OutputShape {
  const { window, from, count } = layout
  const last = folded.texts.length - 1
  const shown = [...folded.texts.slice(0, window.head), layout.elision, ...folded.texts.slice(window.tailStart, last), window.lastText]
  const foldedLines = foldedIn(folded, 0, window.head) + foldedIn(folded, window.tailStart, last)
  const text = shown.join('\n')
  const cutBytes = measured.lineBytes[measured.lines.length - 1]! - utf8ByteLength(window.lastText)
  return {
    text,
    lines: lineCount(measured),
    bytes: measured.bytes,
    shownBytes: utf8ByteLength(text),
    omittedLines: count,
    omittedBytes: layout.elidedBytes + cutBytes,
    foldedLines,
    ...(firstLine === undefined ? {} : { omitted: { fromLine: firstLine + from, count } }),
    truncated: true,
  }
}

/** True when `text` holds two line breaks or more (three lines or more). */
function hasTwoNewlines(text: string): boolean {
  const first = text.indexOf('\n')
  return first >= 0 && text.indexOf('\n', first + 1) >= 0
}

/** Line breaks in `text`. */
function newlines(text: string): number {
  let count = 0
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) count++
  return count
}

/** Sum of the first `count` entries. */
function sumOf(values: ArrayLike<number>, count: number): number {
  let sum = 0
  for (let index = 0; index < count; index++) sum += values[index]!
  return sum
}

/** The first slot that stands for an input line after `line`. */
function firstSlotAfter(folded: FoldedLines, line: number): number {
  let slot = 0
  while (slot < folded.texts.length && folded.starts[slot]! <= line) slot++
  return slot
}

/** Lines of the output: the text's, plus the lines missing from it. */
function lineCount(measured: MeasuredText): number {
  return measured.lines.length + (measured.gap?.lines ?? 0)
}

/** Input lines the fold lines among slots `[start, end)` stand for. */
function foldedIn(folded: FoldedLines, start: number, end: number): number {
  let lines = 0
  for (let slot = start; slot < end; slot++) if (folded.folds[slot]) lines += folded.starts[slot + 1]! - folded.starts[slot]!
  return lines
}

/**
 * No elision line fits: the text's own tail, cut on a code-point boundary. Its first line counts as
 * shown when it keeps a byte of its input line, or when that input line is empty (nothing of it is lost).
 */
function tailShape(measured: MeasuredText, maxBytes: number, firstLine: number | undefined): OutputShape {
  // With lines missing, only what follows them can be a tail: the missing lines are always left out.
  const gap = measured.gap
  const source = gap ? measured.lines.slice(gap.after + 1).join('\n') : measured.text
  const text = keepUtf8Tail(source, maxBytes)
  const keptLines = text.split('\n')
  const firstKept = measured.lines.length - keptLines.length
  const shownLines = keptLines[0] === '' && measured.lines[firstKept] !== '' ? keptLines.length - 1 : keptLines.length
  const omittedLines = lineCount(measured) - shownLines
  const shownBytes = utf8ByteLength(text)
  return {
    text,
    lines: lineCount(measured),
    bytes: measured.bytes,
    shownBytes,
    omittedLines,
    omittedBytes: measured.bytes - shownBytes,
    foldedLines: 0,
    ...(firstLine === undefined || omittedLines === 0 ? {} : { omitted: { fromLine: firstLine, count: omittedLines } }),
    truncated: true,
  }
}
