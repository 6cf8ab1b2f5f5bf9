/** Longest common subsequence table size above which the diff falls back to "all removed, all added". */
const MAX_CELLS = 4_000_000

/** Lines of context shown around each change. */
const CONTEXT = 2

/**
 * A unified-style line diff between a page on disk and its regenerated text, for `docs:check`
 * messages: `---`/`+++` headers naming the page, `@@ line n @@` hunks with two lines of context,
 * cut after `maxLines` output lines.
 */
export function describeDiff(path: string, actual: string, expected: string, maxLines = 80): string {
  const a = actual.split('\n')
  const b = expected.split('\n')
  let prefix = 0
  while (prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) prefix++
  let suffix = 0
  while (suffix < a.length - prefix && suffix < b.length - prefix && a[a.length - 1 - suffix] === b[b.length - 1 - suffix]) suffix++
  const ops = diffLines(a.slice(prefix, a.length - suffix), b.slice(prefix, b.length - suffix))

  // Re-attach context, numbering lines of the page on disk.
  const rows: { mark: ' ' | '-' | '+'; text: string; line: number }[] = []
  for (let i = Math.max(0, prefix - CONTEXT); i < prefix; i++) rows.push({ mark: ' ', text: a[i]!, line: i + 1 })
  let line = prefix + 1
  for (const op of ops) {
    rows.push({ ...op, line })
    if (op.mark !== '+') line++
  }
  for (let i = a.length - suffix; i < Math.min(a.length, a.length - suffix + CONTEXT); i++) rows.push({ mark: ' ', text: a[i]!, line: i + 1 })

  const out = [`--- ${path} (on disk)`, `+++ ${path} (generated)`]
  let previous = -2
  for (let index = 0; index < rows.length; index++) {
    const row = rows[index]!
    const near = rows.slice(Math.max(0, index - CONTEXT), index + CONTEXT + 1).some((other) => other.mark !== ' ')
    if (!near) continue
    if (index !== previous + 1) out.push(`@@ line ${row.line} @@`)
    out.push(`${row.mark}${row.text}`)
    previous = index
    if (out.length >= maxLines) {
      out.push(`… (diff cut after ${maxLines} lines)`)
      break
    }
  }
  return out.join('\n')
}

/** Minimal edit script between two line lists (LCS), as context/removal/addition rows. */
function diffLines(a: readonly string[], b: readonly string[]): { mark: ' ' | '-' | '+'; text: string }[] {
  if (a.length * b.length > MAX_CELLS) return [...a.map((text) => ({ mark: '-' as const, text })), ...b.map((text) => ({ mark: '+' as const, text }))]
  const width = b.length + 1
  const table = new Uint32Array((a.length + 1) * width)
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      table[i * width + j] = a[i] === b[j] ? table[(i + 1) * width + j + 1]! + 1 : Math.max(table[(i + 1) * width + j]!, table[i * width + j + 1]!)
    }
  }
  const ops: { mark: ' ' | '-' | '+'; text: string }[] = []
  let i = 0
  let j = 0
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      ops.push({ mark: ' ', text: a[i]! })
      i++
      j++
    } else if (table[(i + 1) * width + j]! >= table[i * width + j + 1]!) ops.push({ mark: '-', text: a[i++]! })
    else ops.push({ mark: '+', text: b[j++]! })
  }
  while (i < a.length) ops.push({ mark: '-', text: a[i++]! })
  while (j < b.length) ops.push({ mark: '+', text: b[j++]! })
  return ops
}
