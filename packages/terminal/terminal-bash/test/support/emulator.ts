import { Buffer } from 'node:buffer'
import xterm from '@xterm/headless'
import type { TerminalSize } from 'dsh-terminal'
import { useUnicode11 } from '../../src/screen/emulator'
import { EmulatorGuard } from '../../src/screen/emulator-guard'

const { Terminal } = xterm

/** What the guard made of some chunks: the pieces, their work, and all bytes joined. */
export interface Guarded {
  readonly pieces: Uint8Array[]
  readonly works: number[]
  readonly bytes: Buffer
  /** Bytes still held at the end (an unfinished sequence). */
  readonly held: number
}

/** Feed `chunks` (latin1 strings are taken byte for byte) through a fresh guard of `size`. */
export function guard(chunks: readonly (string | Uint8Array)[], size: TerminalSize = { rows: 40, cols: 160 }): Guarded {
  const filter = new EmulatorGuard(size)
  const pieces: Uint8Array[] = []
  const works: number[] = []
  for (const chunk of chunks) {
    filter.write(typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk, (piece, work) => {
      pieces.push(Buffer.from(piece))
      works.push(work)
    })
  }
  return { pieces, works, bytes: Buffer.concat(pieces), held: filter.heldBytes }
}

/** A headless xterm like the screen model's (no scrollback, Unicode 11 widths), without the guard. */
export function emulator(size: TerminalSize): InstanceType<typeof Terminal> {
  const terminal = new Terminal({ rows: size.rows, cols: size.cols, scrollback: 0, allowProposedApi: true, logLevel: 'off' })
  useUnicode11(terminal)
  return terminal
}

/** The visible rows (trailing blanks kept out) and the 0-based cursor, once everything written is parsed. */
export interface Rendered {
  readonly lines: string[]
  readonly cursor: readonly [number, number]
  readonly wrapped: boolean[]
}

/** Write `chunks` to `terminal` one by one (as separate writes) and render the screen afterwards. */
export async function renderAfter(terminal: InstanceType<typeof Terminal>, chunks: readonly Uint8Array[]): Promise<Rendered> {
  for (const chunk of chunks) terminal.write(chunk)
  await new Promise<void>((resolve) => terminal.write('', resolve))
  const buffer = terminal.buffer.active
  const lines: string[] = []
  const wrapped: boolean[] = []
  for (let row = 0; row < terminal.rows; row++) {
    const line = buffer.getLine(buffer.baseY + row)
    lines.push(line?.translateToString(true) ?? '')
    wrapped.push(line?.isWrapped ?? false)
  }
  return { lines, cursor: [buffer.cursorY, buffer.cursorX], wrapped }
}

/** Render `input` on a fresh emulator of `size`: unguarded, or through the guard (in `split` chunks). */
export async function screenOf(input: Uint8Array, size: TerminalSize, options: { guarded: boolean; split?: number[] } = { guarded: false }): Promise<Rendered> {
  const terminal = emulator(size)
  try {
    if (!options.guarded) return await renderAfter(terminal, [input])
    const chunks: Uint8Array[] = []
    let from = 0
    for (const at of [...(options.split ?? []), input.length]) {
      chunks.push(input.subarray(from, at))
      from = at
    }
    return await renderAfter(terminal, guard(chunks, size).pieces)
  } finally {
    terminal.dispose()
  }
}

/** The first parameter xterm dispatched with each CSI final in `finals`, recorded by handlers that stop xterm acting on it (a count that got through costs nothing here). */
export function recordCounts(terminal: InstanceType<typeof Terminal>, finals: string): number[] {
  const seen: number[] = []
  for (const final of finals) {
    terminal.parser.registerCsiHandler({ final }, (params) => {
      seen.push(typeof params[0] === 'number' ? params[0] : 0)
      return true
    })
  }
  return seen
}
