import type { Terminal } from '@xterm/headless'
import type { TerminalScreen } from 'dsh-terminal'

/**
 * The screen an emulator shows now, as a model reads it: the active buffer's visible rows with
 * trailing blanks trimmed and blank rows at the bottom left out, the cursor 1-based. Call it only
 * once every byte that should count has been parsed.
 */
export function renderScreen(terminal: Terminal, title: string | undefined): TerminalScreen {
  const buffer = terminal.buffer.active
  const { rows, cols } = terminal
  const lines: string[] = []
  for (let row = 0; row < rows; row++)
    lines.push(
      buffer
        .getLine(buffer.baseY + row)
        ?.translateToString(true)
        .trimEnd() ?? '',
    )
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop()
  // After printing in the last column the cursor waits to wrap one cell further: it is still shown there.
  const cursor = { row: buffer.cursorY + 1, col: Math.min(buffer.cursorX, cols - 1) + 1 }
  const screen = { lines, size: { rows, cols }, cursor, alternateScreen: buffer.type === 'alternate' }
  return title === undefined ? screen : { ...screen, title }
}
