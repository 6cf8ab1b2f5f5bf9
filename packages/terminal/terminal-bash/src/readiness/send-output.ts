import type { LinePattern } from 'dsh-basics'
import type { TerminalOutputMatch, TerminalSendRead, TerminalSendResult } from 'dsh-terminal'
import { type PartialLine, type SanitizedChunk, SendOutputBuffer, type SendOutputHead } from '../output/index'
import { OutputMatcher } from './output-matcher'

/** The output part of a send's result, numbered from 1 as reads are. */
export type SettledOutput = Pick<TerminalSendResult, 'viewport' | 'truncated' | 'firstLine' | 'outputHead'>

/**
 * What one send collects from the session's output: its bounded buffer (opened at the write, or when
 * it starts waiting without input), the `waitFor` matcher, and what followed a match on a completed
 * line, which belongs to the session's next result rather than this one.
 */
export class SendOutput {
  #buffer: SendOutputBuffer | undefined
  #matcher: OutputMatcher | undefined
  #afterMatch: SendOutputBuffer | undefined

  constructor(
    /** The session's current line: the buffer starts on it. */
    private readonly line: PartialLine,
    /** UTF-8 bytes kept between reads and in the final viewport. */
    private readonly maxBytes: number,
    /** The pattern a send waits for, when it has one. */
    private readonly waitFor: LinePattern | undefined,
  ) {}

  /** Output after the line `waitFor` matched, when the match was on a completed line. */
  get afterMatch(): SendOutputBuffer | undefined {
    return this.#afterMatch
  }

  /** Start collecting; idempotent. */
  open(): void {
    this.#buffer ??= new SendOutputBuffer(this.line, this.maxBytes)
  }

  /** Start testing lines against `waitFor`, if the send has one; lines numbered below `firstLine` (the input's echo) never match. */
  watch(firstLine: number): void {
    if (this.waitFor) this.#matcher = new OutputMatcher(this.waitFor, firstLine)
  }

  /** Keep a chunk: this send's, or (after a match) the session's. */
  collect(chunk: SanitizedChunk): void {
    if (this.#afterMatch) this.#afterMatch.append(chunk)
    else this.#buffer?.append(chunk)
  }

  /**
   * Keep the chunk up to the line `waitFor` matches, and the rest (if the match was on a completed
   * line) for the session: the result ends with the matching line. Answers the match, if any.
   */
  collectOrMatch(chunk: SanitizedChunk): TerminalOutputMatch | undefined {
    const found = this.#matcher?.test(chunk)
    if (!found) {
      this.collect(chunk)
      return undefined
    }
    const { head, rest } = found
    this.#buffer?.append(head)
    if (rest) {
      this.#afterMatch = SendOutputBuffer.fromLineStart(rest.line, this.maxBytes, rest.firstLine)
      this.#afterMatch.append(rest)
    }
    return found.match
  }

  /** Consume the output produced since the previous read. */
  read(): TerminalSendRead {
    return this.#buffer ? this.#buffer.readOutput() : { delta: '', truncated: false }
  }

  /** The output as the result shows it; the current line counts only when no match cut it off. */
  settle(): SettledOutput {
    const settled = this.#buffer?.settle({ currentLine: this.#afterMatch === undefined })
    if (!settled) return { viewport: '', truncated: false }
    const output: SettledOutput = { viewport: settled.viewport, truncated: settled.truncated }
    // The output layer numbers lines from 0, results from 1 (as reads do).
    if (settled.firstLine !== undefined) output.firstLine = settled.firstLine + 1
    if (settled.head) output.outputHead = outputHead(settled.head)
    return output
  }
}

/** A result's view of the output layer's head: the same, its line numbered from 1 as reads are. */
function outputHead(head: SendOutputHead): NonNullable<TerminalSendResult['outputHead']> {
  const { text, firstLine, gapLines, gapBytes } = head
  return firstLine === undefined ? { text, gapLines, gapBytes } : { text, firstLine: firstLine + 1, gapLines, gapBytes }
}
