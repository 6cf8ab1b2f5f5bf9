// Full-screen redraws: a program that repaints a 40×160 alternate screen frame after frame, as top or
// a curses animation does, drained by the raw floor and by a session whose screen model renders every
// frame. Then what the emulator alone costs for the same bytes, as a share of the session's CPU.
import { mkdtempSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { collectInterleaved, timed } from '../lib/measure'
import { RawShell } from '../lib/raw-shell'
import { exact, mount } from '../lib/shell-stack'
import { summarize } from '../lib/stats'
import type { BenchRow } from '../lib/types'

const ROWS = 40
const COLS = 160
const FRAMES = 500

/** A frame: cursor home, then every row rewritten (the frame and row numbers change each time). */
function frame(index: number): string {
  const rows: string[] = []
  for (let row = 0; row < ROWS; row++) rows.push(`${String(index).padStart(5)} ${String(row).padStart(3)} ${'abcdefghij'.repeat(15)}`)
  return `\x1b[H${rows.join('\r\n')}`
}

/** Everything the program prints: enter the alternate screen, the frames, leave it. */
const REDRAW_BYTES = `\x1b[?1049h${Array.from({ length: FRAMES }, (_, index) => frame(index)).join('')}\x1b[?1049l`

const SCRIPT = `import sys
rows, frames = ${ROWS}, ${FRAMES}
body = "abcdefghij" * 15
out = sys.stdout
out.write("\\x1b[?1049h")
for index in range(frames):
    out.write("\\x1b[H" + "\\r\\n".join(f"{index:5d} {row:3d} {body}" for row in range(rows)))
out.write("\\x1b[?1049l")
out.flush()
`

type HeadlessTerminal = { write(data: string, callback?: () => void): void; dispose(): void }
const { Terminal } = createRequire(new URL('../../packages/terminal/terminal-bash/package.json', import.meta.url))('@xterm/headless') as {
  Terminal: new (options: Record<string, unknown>) => HeadlessTerminal
}

/** Milliseconds a fresh emulator of the session's size takes to parse the redraw's bytes. */
async function emulatorMs(): Promise<number> {
  const terminal = new Terminal({ rows: ROWS, cols: COLS, scrollback: 0, allowProposedApi: true })
  try {
    return await timed(() => new Promise<void>((resolve) => terminal.write(REDRAW_BYTES, resolve)))
  } finally {
    terminal.dispose()
  }
}

/** The redraw drained by the floor and by a session, alternating; the emulator's own parse time. */
export async function screen(): Promise<BenchRow[]> {
  const directory = mkdtempSync(join(tmpdir(), 'dsh-bench-screen-'))
  const script = join(directory, 'redraw.py')
  writeFileSync(script, SCRIPT)
  const command = `python3 ${script}`
  const stack = await mount()
  const raw = await RawShell.open()
  const id = await stack.open()
  const cpu: number[] = []
  try {
    const megabytes = Buffer.byteLength(REDRAW_BYTES) / 1_048_576
    const { floor, contender } = await collectInterleaved(
      10,
      async () => megabytes / ((await timed(() => raw.run(command))) / 1000),
      async () => {
        const before = process.cpuUsage()
        const elapsed = await timed(async () => exact(await stack.run(id, command), 'dsh> ', 'the redraw', 'prompt'))
        const used = process.cpuUsage(before)
        cpu.push((used.user + used.system) / 1000)
        return megabytes / (elapsed / 1000)
      },
      2,
    )
    const parse: number[] = []
    for (let index = 0; index < 12; index++) parse.push(await emulatorMs())
    const share = summarize(parse.slice(2)).p50 / summarize(cpu).p50
    return [
      { figure: `raw: ${FRAMES} full-screen frames (${ROWS}×${COLS}, alternate screen)`, unit: 'MiB/s', higherIsBetter: true, samples: floor },
      {
        figure: `shell: ${FRAMES} full-screen frames, screen model on`,
        unit: 'MiB/s',
        higherIsBetter: true,
        floor: `raw: ${FRAMES} full-screen frames (${ROWS}×${COLS}, alternate screen)`,
        note: `${megabytes.toFixed(2)} MiB per run; must settle stdin_read at the prompt; floor and shell alternate`,
        samples: contender,
      },
      {
        figure: 'emulator alone: parse the same bytes (@xterm/headless)',
        unit: 'ms',
        note: `${(share * 100).toFixed(0)}% of the process's CPU during a shell run (p50 ${summarize(cpu).p50.toFixed(1)} ms user+system)`,
        samples: parse.slice(2),
      },
    ]
  } finally {
    await raw.close()
    await stack.close(id)
    await stack.dispose()
  }
}
