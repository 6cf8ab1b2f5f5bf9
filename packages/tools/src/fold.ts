import { utf8ByteLength } from 'dsh-basics'

/**
 * The lines of a text after folding repeats, as parallel arrays with one slot per line to show (an
 * input line or a fold line), so a multi-MiB output costs arrays, not one object per line.
 */
export interface FoldedLines {
  /** The text of each line to show. */
  texts: readonly string[]
  /** UTF-8 bytes of each text (`texts.length` slots; the array may be longer). */
  bytes: ArrayLike<number>
  /** Index of the first input line each slot stands for (a fold line stands for the run's repeats); one more entry holds the input's line count. */
  starts: ArrayLike<number>
  /** Non-zero where the slot is a fold line. */
  folds: ArrayLike<number>
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
 * once by the caller. With `fold` false, or no run worth folding, the input arrays are the slots.
 */
export function foldRepeatedLines(lines: readonly string[], lineBytes: ArrayLike<number>, fold: boolean, barrier?: number): FoldedLines {
  const last = lines.length - 1
  const firstRun = fold ? firstFoldableRun(lines, lineBytes, barrier) : -1
  if (firstRun < 0) return { texts: lines, bytes: lineBytes, starts: identity(lines.length), folds: new Uint8Array(lines.length), foldedLines: 0 }

  // A fold turns k ≥ 2 lines into 2 slots, so there are never more slots than input lines.
  const texts: string[] = lines.slice(0, firstRun)
  const bytes = new Float64Array(lines.length)
  const starts = new Float64Array(lines.length + 1)
  const folds = new Uint8Array(lines.length)
  for (let index = 0; index < firstRun; index++) {
    bytes[index] = lineBytes[index]!
    starts[index] = index
  }
  let slot = firstRun
  let foldedLines = 0
  let index = firstRun
  while (index < last) {
    const line = lines[index]!
    const size = lineBytes[index]!
    const end = runEnd(lines, index, last, barrier)
    const repeats = end - index - 1
    const marker = repeats > 0 && foldSaves(size, repeats) ? foldLine(repeats) : undefined
    if (marker !== undefined) {
      texts.push(line, marker)
      bytes[slot] = size
      starts[slot++] = index
      bytes[slot] = utf8ByteLength(marker)
      starts[slot] = index + 1
      folds[slot++] = 1
      foldedLines += repeats
    } else {
      for (let copy = index; copy < end; copy++) {
        texts.push(line)
        bytes[slot] = size
        starts[slot++] = copy
      }
    }
    index = end
  }
  texts.push(lines[last]!)
  bytes[slot] = lineBytes[last]!
  starts[slot++] = last
  starts[slot] = lines.length
  return { texts, bytes, starts, folds, foldedLines }
}

/** End (exclusive) of the run of lines equal to `lines[index]`, stopping before `last` and after `barrier`. */
function runEnd(lines: readonly string[], index: number, last: number, barrier: number | undefined): number {
  // A run never crosses the barrier (lines missing after it would be hidden inside the fold).
  const limit = barrier !== undefined && index <= barrier ? Math.min(barrier + 1, last) : last
  const line = lines[index]
  let end = index + 1
  while (end < limit && lines[end] === line) end++
  return end
}

/** A run as lines takes k·b + (k − 1) bytes; folded, b + 1 + the fold line. */
function foldSaves(lineBytes: number, repeats: number): boolean {
  return lineBytes + 1 + utf8ByteLength(foldLine(repeats)) < (repeats + 1) * lineBytes + repeats
}

/** Index of the first line that starts a run worth folding, or −1: most output has none, and then nothing is copied. */
function firstFoldableRun(lines: readonly string[], lineBytes: ArrayLike<number>, barrier: number | undefined): number {
  const last = lines.length - 1
  let index = 0
  while (index < last) {
    if (lines[index + 1] !== lines[index]) {
      index++
      continue
    }
    const end = runEnd(lines, index, last, barrier)
    if (end - index >= 2 && foldSaves(lineBytes[index]!, end - index - 1)) return index
    index = end
  }
  return -1
}

/** `starts` when every slot is its own input line: 0, 1, …, count. */
function identity(count: number): Float64Array {
  const starts = new Float64Array(count + 1)
  for (let index = 0; index <= count; index++) starts[index] = index
  return starts
}
