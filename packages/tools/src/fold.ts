import { utf8ByteLength } from './utf8'

/**
 * The lines of a text after folding repeats, as parallel arrays with one slot per line to show (an
 * input line or a fold line), so a multi-MiB output costs arrays, not one object per line.
 */
export interface FoldedLines {
  /** The text of each line to show. */
  texts: string[]
  /** UTF-8 bytes of each text. */
  bytes: number[]
  /** Index of the first input line each slot stands for (a fold line stands for the run's repeats). */
  starts: number[]
  /** True where the slot is a fold line. */
  folds: boolean[]
  /** Input lines replaced by fold lines, over all slots. */
  foldedLines: number
}

/** The line that replaces `repeats` copies of the line above it: `[… 3 more identical lines]`. */
export function foldLine(repeats: number): string {
  return `[… ${repeats} more identical ${repeats === 1 ? 'line' : 'lines'}]`
}

/**
 * Fold each run of k ≥ 2 identical lines into the line and a {@link foldLine} for the k − 1 repeats,
 * only where that saves bytes. The last line (the cursor's) is never part of a run, nor does a run
 * cross input line `barrier` and the next. `lineBytes[i]` is the UTF-8 size of `lines[i]`, measured
 * once by the caller. With `fold` false every line stays.
 */
export function foldRepeatedLines(lines: readonly string[], lineBytes: readonly number[], fold: boolean, barrier?: number): FoldedLines {
  const folded: FoldedLines = { texts: [], bytes: [], starts: [], folds: [], foldedLines: 0 }
  const push = (text: string, bytes: number, start: number, isFold: boolean) => {
    folded.texts.push(text)
    folded.bytes.push(bytes)
    folded.starts.push(start)
    folded.folds.push(isFold)
  }
  const last = lines.length - 1
  let index = 0
  while (index < last) {
    const line = lines[index]!
    const bytes = lineBytes[index]!
    let end = index + 1
    // A run never crosses the barrier (lines missing after it would be hidden inside the fold).
    const limit = barrier !== undefined && index <= barrier ? Math.min(barrier + 1, last) : last
    if (fold) while (end < limit && lines[end] === line) end++
    const repeats = end - index - 1
    const marker = repeats > 0 ? foldLine(repeats) : ''
    const markerBytes = repeats > 0 ? utf8ByteLength(marker) : 0
    // The run as lines takes k·b + (k − 1) bytes; folded, b + 1 + the fold line.
    if (repeats > 0 && bytes + 1 + markerBytes < (repeats + 1) * bytes + repeats) {
      push(line, bytes, index, false)
      push(marker, markerBytes, index + 1, true)
      folded.foldedLines += repeats
    } else {
      for (let copy = index; copy < end; copy++) push(line, bytes, copy, false)
    }
    index = end
  }
  push(lines[last]!, lineBytes[last]!, last, false)
  return folded
}
