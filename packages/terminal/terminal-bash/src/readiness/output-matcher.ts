import type { LinePattern } from 'dsh-basics'
import type { TerminalOutputMatch } from 'dsh-terminal'
import type { SanitizedChunk } from '../output/index'

/** A match in one chunk: what matched, the chunk up to the end of the matching line, and what followed it. */
export interface MatchFound {
  /** The matched text and its line. */
  readonly match: TerminalOutputMatch
  /** The chunk's lines up to and including the matching one (the whole chunk for a match on the current line). */
  readonly head: SanitizedChunk
  /** The lines after the matching one and the current line, when the match was on a completed line. */
  readonly rest?: SanitizedChunk
}

/**
 * Tests a send's output against its `waitFor`, line by line as chunks arrive: each completed line
 * once, and the line the cursor is on as it stands (a server may print `ready` without a newline).
 * The pattern is a `LinePattern`: linear-time, stateless, and it sees a bounded tail of each line,
 * so one test costs a bounded time whatever the output. Lines numbered below `firstLine` are the
 * echo of the input and never match.
 */
export class OutputMatcher {
  readonly #pattern: LinePattern
  readonly #firstLine: number

  /** @param firstLine - the first line number that may match (later than the input's echo). */
  constructor(pattern: LinePattern, firstLine: number) {
    this.#pattern = pattern
    this.#firstLine = firstLine
  }

  /** The first match in `chunk`, split at the end of its line; `undefined` when nothing matched. */
  test(chunk: SanitizedChunk): MatchFound | undefined {
    const { lines } = chunk
    for (let index = Math.max(0, this.#firstLine - chunk.firstLine); index < lines.length; index++) {
      const line = lines[index] as string
      const text = this.#pattern.firstMatch(line)
      if (text !== undefined) return { match: { text, line }, ...splitChunk(chunk, index + 1) }
    }
    const current = chunk.line
    if (current.number < this.#firstLine || current.length === 0) return undefined
    const line = current.text()
    const text = this.#pattern.firstMatch(line)
    return text === undefined ? undefined : { match: { text, line }, head: chunk }
  }
}

/** `chunk` cut after its first `count` lines; the rest keeps the current line. */
export function splitChunk(chunk: SanitizedChunk, count: number): { head: SanitizedChunk; rest: SanitizedChunk } {
  const head: SanitizedChunk = {
    lines: chunk.lines.slice(0, count),
    sizes: chunk.sizes.slice(0, count),
    firstLine: chunk.firstLine,
    clipped: chunk.clipped.filter((index) => index < count),
    markers: [],
    line: chunk.line,
  }
  const rest: SanitizedChunk = {
    lines: chunk.lines.slice(count),
    sizes: chunk.sizes.slice(count),
    firstLine: chunk.firstLine + count,
    clipped: chunk.clipped.filter((index) => index >= count).map((index) => index - count),
    markers: [],
    line: chunk.line,
  }
  return { head, rest }
}
