import type { FoldedLines } from './fold'
import { keepUtf8Tail, utf8ByteLength } from 'dsh-basics'

/** Slots of {@link FoldedLines} a head-and-tail window keeps: `[0, head)` and `[tailStart, length)`. */
export interface HeadTailWindow {
  /** Number of leading slots kept whole. */
  head: number
  /** First slot of the tail; the slots in `[head, tailStart)` are left out, at least one of them. */
  tailStart: number
  /** The last line as shown: whole, or its own tail when it alone is longer than the tail's budget. */
  lastText: string
}

/**
 * Choose the head and tail of `folded` that fit `budget` bytes, each kept line costing its bytes plus
 * one newline (the newline that joins it to the elision line or its neighbour). The head gets a third
 * of the budget, the tail the rest plus what the head left; then the head takes what the tail left.
 * Undefined when no window leaves a line out or the last line cannot keep even one code point.
 * With `split` (the first slot after lines missing from the input) the head stays before it and the
 * tail after it, so the missing lines are always inside what is left out.
 */
export function selectHeadTail(folded: FoldedLines, budget: number, split?: number): HeadTailWindow | undefined {
  const count = folded.texts.length
  const last = count - 1
  if (count < 2 || budget < 1) return undefined
  const cost = (slot: number) => folded.bytes[slot]! + 1
  // With a split the missing lines between slots split−1 and split are what is left out: the head
  // ends and the tail starts at the split at the latest; without one, a slot is always left out.
  const gap = split === undefined ? 1 : 0
  const headLimit = (tailStart: number) => (split === undefined ? tailStart - 1 : Math.min(split, tailStart))

  // The first pass stops short of the slot before the last, so something is always left out.
  let head = 0
  let headUsed = 0
  const headShare = Math.floor(budget / 3)
  while (head < headLimit(last) && headUsed + cost(head) <= headShare) headUsed += cost(head++)

  const tailBudget = budget - headUsed
  let tailStart = last
  let lastText = folded.texts[last]!
  let tailUsed = cost(last)
  if (tailUsed <= tailBudget) {
    const tailFloor = Math.max(head + gap, split ?? 0)
    while (tailStart - 1 >= tailFloor && tailUsed + cost(tailStart - 1) <= tailBudget) tailUsed += cost(--tailStart)
    // A fold line whose subject line is left out would say "more" of nothing: leave it out too.
    if (folded.folds[tailStart]) tailUsed -= cost(tailStart++)
  } else {
    // Only a non-empty last line can overflow (an empty one costs 1 byte and tailBudget ≥ 1).
    lastText = keepUtf8Tail(lastText, tailBudget - 1)
    if (lastText === '') return undefined
    tailUsed = utf8ByteLength(lastText) + 1
  }

  while (head < headLimit(tailStart) && headUsed + tailUsed + cost(head) <= budget) headUsed += cost(head++)
  return { head, tailStart, lastText }
}
