/** A terminal's window size in character cells. */
export interface TerminalSize {
  /** Height in rows (1 … {@link MAX_TERMINAL_ROWS}). */
  readonly rows: number
  /** Width in columns (1 … {@link MAX_TERMINAL_COLS}). */
  readonly cols: number
}

/** Largest height a session may ask for: larger screens only cost memory and tokens. */
export const MAX_TERMINAL_ROWS = 500

/** Largest width a session may ask for. */
export const MAX_TERMINAL_COLS = 1000

/**
 * What the terminal shows now, as a screen (not a history of lines): what a full-screen program
 * (vim, less, top, a curses menu) drew, rendered by the session's terminal emulator.
 */
export interface TerminalScreen {
  /** The visible rows, top first, trailing blanks trimmed; blank rows at the bottom are left out. */
  readonly lines: readonly string[]
  /** The window size the program draws for. */
  readonly size: TerminalSize
  /** The cursor, 1-based (row 1 is the top row, column 1 the leftmost). */
  readonly cursor: { readonly row: number; readonly col: number }
  /** A full-screen program switched to the alternate screen and has not switched back. */
  readonly alternateScreen: boolean
  /** The window title a program set (OSC 0/2), when it set a non-empty one. */
  readonly title?: string
}

/** How a read renders the session: its line history (default) or the screen as it is now. */
export const TERMINAL_READ_VIEWS = ['lines', 'screen'] as const

/** One of {@link TERMINAL_READ_VIEWS}. */
export type TerminalReadView = (typeof TERMINAL_READ_VIEWS)[number]
