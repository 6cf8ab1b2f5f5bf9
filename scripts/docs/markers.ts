/** One generated region of a page: `<!-- BEGIN GENERATED name: args -->` … `<!-- END GENERATED name -->`. */
export interface GeneratedBlock {
  /** Generator name, e.g. `deps` or `api`. */
  readonly name: string
  /** Whitespace-separated arguments after the colon (e.g. package names), in page order. */
  readonly args: readonly string[]
  /** 1-based line of the BEGIN marker, for messages. */
  readonly line: number
}

const BEGIN = /<!-- BEGIN GENERATED ([a-z][a-z-]*)(?::([^>]*?))? -->/g

/** The marker line that opens a block, as the generator writes it. */
export function beginMarker(name: string, args: readonly string[] = []): string {
  return args.length > 0 ? `<!-- BEGIN GENERATED ${name}: ${args.join(' ')} -->` : `<!-- BEGIN GENERATED ${name} -->`
}

/** The marker line that closes a block. */
export function endMarker(name: string): string {
  return `<!-- END GENERATED ${name} -->`
}

/** Every generated block of a page, in order; throws on a BEGIN without its END. */
export function findBlocks(page: string): GeneratedBlock[] {
  const blocks: GeneratedBlock[] = []
  for (const match of page.matchAll(BEGIN)) {
    const name = match[1]!
    const start = match.index
    if (page.indexOf(endMarker(name), start) < 0) {
      throw new Error(`line ${lineOf(page, start)}: "${match[0]}" has no "${endMarker(name)}"`)
    }
    blocks.push({ name, args: (match[2] ?? '').trim().split(/\s+/).filter(Boolean), line: lineOf(page, start) })
  }
  return blocks
}

/**
 * Replace the body of every generated block with what `render` returns for it (a blank line
 * separates the markers from the body). Text outside the markers is kept byte for byte.
 */
export function spliceBlocks(page: string, render: (block: GeneratedBlock) => string): string {
  let out = ''
  let cursor = 0
  for (const match of page.matchAll(BEGIN)) {
    if (match.index < cursor) continue
    const name = match[1]!
    const block: GeneratedBlock = { name, args: (match[2] ?? '').trim().split(/\s+/).filter(Boolean), line: lineOf(page, match.index) }
    const bodyStart = match.index + match[0].length
    const endAt = page.indexOf(endMarker(name), bodyStart)
    if (endAt < 0) throw new Error(`line ${block.line}: "${match[0]}" has no "${endMarker(name)}"`)
    out += page.slice(cursor, match.index) + beginMarker(name, block.args) + '\n\n' + render(block).trim() + '\n\n'
    cursor = endAt
  }
  return out + page.slice(cursor)
}

function lineOf(text: string, index: number): number {
  let line = 1
  for (let i = text.indexOf('\n'); i >= 0 && i < index; i = text.indexOf('\n', i + 1)) line += 1
  return line
}
