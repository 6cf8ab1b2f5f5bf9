import { createHash } from 'node:crypto'

/**
 * The `prev` of an audit log's first line: 64 zeros (the SHA-256 of no line). Every later line's
 * `prev` is {@link lineHash} of the line before it.
 */
export const GENESIS = '0'.repeat(64)

/** Hex SHA-256 of one line's exact bytes, without its terminating newline. */
export function lineHash(line: string | Uint8Array): string {
  return createHash('sha256').update(line).digest('hex')
}

/** How a log can break; each is reported distinctly by {@link verifyChain}. */
export type ChainBreakKind =
  /** A line's content differs from what the next line's `prev` vouches for. */
  | 'changed'
  /** One or more lines are missing: `seq` jumps ahead and no line of the file has the hash `prev` asks for. */
  | 'removed'
  /** A line's `prev` names another line of the file than the one before it. */
  | 'reordered'
  /** The last line has no terminating newline (a write that stopped half-way, or a cut file). */
  | 'truncated'
  /** A line that is not a JSON object with a 64-hex-digit `prev` and an integer `seq`. */
  | 'malformed'

/** The first place a log stops being the chain it claims to be. */
export interface ChainBreak {
  readonly kind: ChainBreakKind
  /** 1-based line number the break is reported at. */
  readonly line: number
  /** What is wrong, for a person. */
  readonly detail: string
}

/** The outcome of {@link verifyChain}. */
export type ChainReport =
  | { readonly ok: true; readonly lines: number; readonly lastHash: string }
  | { readonly ok: false; readonly lines: number; readonly break: ChainBreak }

interface ParsedLine {
  readonly text: string
  readonly hash: string
  readonly prev: string | undefined
  readonly seq: number | undefined
}

/**
 * Check a whole audit log: every line a JSON object whose `prev` is the hash of the line before it
 * ({@link GENESIS} for the first), ending in a newline. Reports the first break, classified:
 * a `prev` that matches another line of the file is `reordered`; one that matches none is `removed`
 * when `seq` skips numbers there, else `changed` (the line before it was edited).
 */
export function verifyChain(content: string): ChainReport {
  if (content === '') return { ok: true, lines: 0, lastHash: GENESIS }
  const texts = content.split('\n')
  const complete = texts.at(-1) === ''
  if (complete) texts.pop()
  const lines = texts.map(parseLine)
  const byHash = new Map<string, number>()
  lines.forEach((line, index) => {
    if (!byHash.has(line.hash)) byHash.set(line.hash, index)
  })
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!
    const number = index + 1
    if (!complete && index === lines.length - 1) {
      return broken(
        lines.length,
        'truncated',
        number,
        `line ${number}, the last, has no terminating newline: it was cut short (a write that stopped half-way, or a truncated file)`,
      )
    }
    if (line.prev === undefined || line.seq === undefined) {
      return broken(lines.length, 'malformed', number, `line ${number} is not an audit record (a JSON object with "seq" and a 64-hex-digit "prev")`)
    }
    const expected = index === 0 ? GENESIS : lines[index - 1]!.hash
    if (line.prev === expected) continue
    const named = byHash.get(line.prev)
    if (named !== undefined && named !== index - 1) {
      return broken(
        lines.length,
        'reordered',
        number,
        `line ${number} follows line ${named + 1} in the chain, but line ${index} stands before it: lines were moved`,
      )
    }
    const before = index === 0 ? undefined : lines[index - 1]!
    if (index === 0 && line.seq > 1) {
      return broken(lines.length, 'removed', number, `the log starts at record ${line.seq}: the records before it were removed`)
    }
    if (index === 0) return broken(lines.length, 'changed', number, 'line 1 does not start the chain (its prev is not the genesis value)')
    if (before?.seq !== undefined && line.seq > before.seq + 1) {
      const missing = line.seq - before.seq - 1
      return broken(
        lines.length,
        'removed',
        number,
        `${missing} record${missing === 1 ? '' : 's'} (seq ${before.seq + 1}${missing > 1 ? `–${line.seq - 1}` : ''}) removed between lines ${index} and ${number}`,
      )
    }
    return broken(lines.length, 'changed', index, `line ${index} was changed: line ${number} vouches for other content`)
  }
  return { ok: true, lines: lines.length, lastHash: lines.at(-1)?.hash ?? GENESIS }
}

function broken(lines: number, kind: ChainBreakKind, line: number, detail: string): ChainReport {
  return { ok: false, lines, break: { kind, line, detail } }
}

function parseLine(text: string): ParsedLine {
  const hash = lineHash(text)
  let record: unknown
  try {
    record = JSON.parse(text)
  } catch {
    return { text, hash, prev: undefined, seq: undefined }
  }
  if (typeof record !== 'object' || record === null || Array.isArray(record)) return { text, hash, prev: undefined, seq: undefined }
  const { prev, seq } = record as { prev?: unknown; seq?: unknown }
  return {
    text,
    hash,
    prev: typeof prev === 'string' && /^[0-9a-f]{64}$/.test(prev) ? prev : undefined,
    seq: typeof seq === 'number' && Number.isSafeInteger(seq) && seq >= 1 ? seq : undefined,
  }
}
