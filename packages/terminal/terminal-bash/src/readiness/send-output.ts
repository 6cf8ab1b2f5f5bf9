import type { LinePattern } from 'dsh-basics'
import type { TerminalEarlierOutput, TerminalOutputMatch, TerminalSendRead, TerminalSendResult } from 'dsh-terminal'
import { type PartialLine, type SanitizedChunk, SendOutputBuffer, type SendOutputHead } from '../output/index'
import { lineNumberOf } from '../output/line-numbers'
import { OutputMatcher, splitChunk } from './output-matcher'

/** The output part of a send's result, numbered from 1 as reads are. */
export type SettledOutput = Pick<TerminalSendResult, 'viewport' | 'truncated' | 'firstLine' | 'outputHead'>

/** Output a result shows under the earlier-output label, numbered from 1 as reads are. */
export type EarlierPart = TerminalEarlierOutput

/** Finds the line of the running command's prompt in a chunk (the shell's own primary marker), if it is there. */
export type PromptLineFinder = (chunk: SanitizedChunk) => number | undefined

/**
 * What one send collects from the session's output: its bounded buffer (opened at the write, or when
 * it starts waiting without input), the `waitFor` matcher, and what followed a match on a completed
 * line, which belongs to the session's next result rather than this one.
 *
 * Input typed ahead of a running command waits in the terminal until that command ends: what is
 * printed up to the shell's next prompt is the command's, not this send's. It is kept apart and shown
 * as earlier output, and this send's own output starts on the prompt's line.
 */
export class SendOutput {
  #buffer: SendOutputBuffer | undefined
  #matcher: OutputMatcher | undefined
  #afterMatch: SendOutputBuffer | undefined
  /** Input lines of the send (the echo `waitFor` never matches). */
  #inputLines = 0
  /** Set while typed-ahead input waits for the running command's prompt. */
  #findPrompt: PromptLineFinder | undefined
  #earlier: EarlierPart | undefined
  /** Typed-ahead input found the running command's prompt: that prompt's marker is not this send's. */
  #passedPrompt = false

  constructor(
    /** The session's current line: the buffer starts on it. */
    private readonly line: PartialLine,
    /** UTF-8 bytes kept between reads and in the final viewport. */
    private readonly maxBytes: number,
    /** The pattern a send waits for, when it has one. */
    private readonly waitFor: LinePattern | undefined,
  ) {}

  /** What the running command printed before its prompt, once typed-ahead input found that prompt. */
  get earlier(): EarlierPart | undefined {
    return this.#earlier
  }

  /** Whether typed-ahead input found the running command's prompt (its marker carries that command's status). */
  get passedPrompt(): boolean {
    return this.#passedPrompt
  }

  /** Output after the line `waitFor` matched, when the match was on a completed line. */
  get afterMatch(): SendOutputBuffer | undefined {
    return this.#afterMatch
  }

  /** Start collecting; idempotent. */
  open(): void {
    this.#buffer ??= new SendOutputBuffer(this.line, this.maxBytes)
  }

  /**
   * Start testing lines against `waitFor`, if the send has one; the first `inputLines` lines from
   * `firstLine` on (the input's echo) never match.
   */
  watch(firstLine: number, inputLines: number): void {
    this.#inputLines = inputLines
    if (this.waitFor) this.#matcher = new OutputMatcher(this.waitFor, firstLine + inputLines)
  }

  /**
   * The input was typed ahead of a running command: output up to the line of the prompt `find`
   * locates is that command's. Matching waits for the prompt too.
   */
  typedAhead(find: PromptLineFinder): void {
    this.#findPrompt = find
  }

  /** Keep a chunk: this send's, or (after a match) the session's. */
  collect(chunk: SanitizedChunk): void {
    const own = this.#findPrompt ? this.#passEarlier(chunk) : chunk
    if (!own) return
    if (this.#afterMatch) this.#afterMatch.append(own)
    else this.#buffer?.append(own)
  }

  /**
   * Keep the chunk up to the line `waitFor` matches, and the rest (if the match was on a completed
   * line) for the session: the result ends with the matching line. Answers the match, if any.
   */
  collectOrMatch(chunk: SanitizedChunk): TerminalOutputMatch | undefined {
    const own = this.#findPrompt ? this.#passEarlier(chunk) : chunk
    if (!own) return undefined
    const found = this.#matcher?.test(own)
    if (!found) {
      this.collect(own)
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

  /**
   * While typed-ahead input waits: keep `chunk` as the running command's output up to its prompt's
   * line, and answer what follows from that line on (the send's own), or nothing before the prompt.
   */
  #passEarlier(chunk: SanitizedChunk): SanitizedChunk | undefined {
    const promptLine = (this.#findPrompt as PromptLineFinder)(chunk)
    if (promptLine === undefined) {
      this.#buffer?.append(chunk)
      return undefined
    }
    this.#findPrompt = undefined
    this.#passedPrompt = true
    const { head, rest } = splitChunk(chunk, Math.max(0, promptLine - chunk.firstLine))
    const earlier = this.#buffer
    if (earlier) {
      earlier.append(head)
      const { viewport, truncated, firstLine } = earlier.settle({ currentLine: false })
      if (viewport !== '' || truncated)
        this.#earlier = firstLine === undefined ? { output: viewport, truncated } : { output: viewport, truncated, firstLine: lineNumberOf(firstLine) }
      this.#buffer = SendOutputBuffer.fromLineStart(chunk.line, this.maxBytes, promptLine)
    }
    if (this.waitFor) this.#matcher = new OutputMatcher(this.waitFor, promptLine + this.#inputLines)
    return rest
  }

  /**
   * Give up the unsettled buffer (a released send): it keeps taking the session's output, which the
   * next result shows as earlier output; this send's own result then shows nothing.
   */
  handOver(): SendOutputBuffer | undefined {
    const buffer = this.#afterMatch ?? this.#buffer
    this.#buffer = undefined
    this.#afterMatch = undefined
    this.#findPrompt = undefined
    return buffer
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
    if (settled.firstLine !== undefined) output.firstLine = lineNumberOf(settled.firstLine)
    if (settled.head) output.outputHead = outputHead(settled.head)
    return output
  }
}

/** A result's view of the output layer's head: the same, its line numbered from 1 as reads are. */
function outputHead(head: SendOutputHead): NonNullable<TerminalSendResult['outputHead']> {
  const { text, firstLine, gapLines, gapBytes } = head
  return firstLine === undefined ? { text, gapLines, gapBytes } : { text, firstLine: lineNumberOf(firstLine), gapLines, gapBytes }
}

/**
 * The output printed between the previous result and the write, followed by what the running
 * command printed after it when the input was typed ahead: one stretch of the terminal, in order.
 */
export function joinEarlier(before: EarlierPart | undefined, typedAhead: EarlierPart | undefined): EarlierPart | undefined {
  if (!before || !typedAhead) return before ?? typedAhead
  const output = before.output + typedAhead.output
  const truncated = before.truncated || typedAhead.truncated
  return before.firstLine === undefined ? { output, truncated } : { output, truncated, firstLine: before.firstLine }
}
