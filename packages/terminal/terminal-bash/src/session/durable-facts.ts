import type { TerminalInputState, TerminalSize } from 'dsh-terminal'

/**
 * What a durable terminal keeps for whoever adopts it (`SubprocessTerminalHandle.setFacts`): the
 * marker nonces the stream is parsed with, where the last delivered result ended in the output
 * (bytes before it rebuild scrollback and screen only, bytes after it are earlier output), the
 * window and `TERM`, the pinned shell group, and the session's name.
 */
export interface DurableFacts {
  readonly v: 1
  readonly nonce: number
  readonly replNonce?: number | undefined
  /** Absolute output offset of the end of the last result delivered for the session. */
  readonly delivered: number
  readonly rows: number
  readonly cols: number
  readonly term?: string | undefined
  readonly shellGroup?: number | undefined
  readonly name?: string | undefined
  /** What the terminal waited for when its last send settled, for a host that lists it detached. */
  readonly input?: TerminalInputState | undefined
}

/** The facts as stored (small JSON, far under `MAX_TERMINAL_FACTS_BYTES`). */
export function serializeFacts(facts: DurableFacts): string {
  return JSON.stringify(facts)
}

/** Facts read back, or undefined when they are not this version's (then the session cannot be rebuilt). */
export function parseFacts(text: string): DurableFacts | undefined {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return undefined
  }
  if (typeof value !== 'object' || value === null) return undefined
  const facts = value as Record<string, unknown>
  const count = (key: string, min: number) => Number.isSafeInteger(facts[key]) && (facts[key] as number) >= min
  if (facts.v !== 1 || !count('nonce', 0) || !count('delivered', 0) || !count('rows', 1) || !count('cols', 1)) return undefined
  if (facts.replNonce !== undefined && !count('replNonce', 0)) return undefined
  if (facts.shellGroup !== undefined && !count('shellGroup', 1)) return undefined
  if (facts.term !== undefined && typeof facts.term !== 'string') return undefined
  if (facts.name !== undefined && typeof facts.name !== 'string') return undefined
  if (facts.input !== undefined && (typeof facts.input !== 'object' || facts.input === null || typeof (facts.input as { kind?: unknown }).kind !== 'string')) {
    return undefined
  }
  return facts as unknown as DurableFacts
}

/** The window the facts name. */
export function factsSize(facts: DurableFacts): TerminalSize {
  return { rows: facts.rows, cols: facts.cols }
}
