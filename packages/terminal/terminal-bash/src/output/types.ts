/**
 * A prompt marker (`OSC 133;D;<status>`, PS2's `OSC 133;A;k=c;<nonce>`, or a REPL's) found in the
 * byte stream, located in rendered coordinates so a consumer can compare what was printed after it.
 * Each kind names its own number: a primary prompt's `status`, the others' `nonce`.
 */
export type PromptMarker = ShellPromptMarker | ContinuationPromptMarker | ReplPromptMarker

/** What a marker carries, as read from its OSC payload: one kind, each with its own number. */
export type PromptMarkerPayload = ShellPromptPayload | ContinuationPromptPayload | ReplPromptPayload

/** Where a marker landed. */
interface MarkerPlace {
  /** Absolute number of the line the marker landed on (0 = the first line of the session). */
  readonly line: number
  /** Cursor column (a wide character takes two) where the marker landed on that line. */
  readonly column: number
}

/** The shell's primary prompt (PS1): it reads the next command. */
export interface ShellPromptPayload {
  readonly kind: 'prompt'
  /** The number the marker carries (the last command's `$?` encoded with the session's nonce), or null when absent or not a number. */
  readonly status: number | null
}

/** The continuation prompt (PS2): the shell needs more of the command. */
export interface ContinuationPromptPayload {
  readonly kind: 'continuation'
  /** The nonce the marker carries (the session's, when it is its own), or null. */
  readonly nonce: number | null
}

/** A REPL's prompt (Python's `sys.ps1`/`sys.ps2`) started in the session. */
export interface ReplPromptPayload {
  readonly kind: 'repl'
  /** The nonce the marker carries (the session's REPL nonce, when it is its own). */
  readonly nonce: number
  /** The REPL's pid and name, and how many columns its prompt takes after the marker. */
  readonly repl: { readonly pid: number; readonly promptLength: number; readonly name: string }
}

/** A marker of the shell's primary prompt, where it landed. */
export type ShellPromptMarker = MarkerPlace & ShellPromptPayload
/** A marker of the continuation prompt, where it landed. */
export type ContinuationPromptMarker = MarkerPlace & ContinuationPromptPayload
/** A marker of a REPL's prompt, where it landed. */
export type ReplPromptMarker = MarkerPlace & ReplPromptPayload

/**
 * Read-only view of the line the cursor is on. It is live: it changes as later chunks arrive,
 * because carriage returns and backspaces may still rewrite it.
 */
export interface PartialLine {
  /** Absolute number of this line: the count of lines completed before it. */
  readonly number: number
  /** Length in columns (a wide character takes two), including any head that was dropped by the line cap. */
  readonly length: number
  /** Cursor column; it may be past the end after a cursor move. */
  readonly cursor: number
  /** Leading columns dropped because the line outgrew the cap; the retained text starts here. */
  readonly base: number
  /** Retained content of the line. Cached until the next edit, so repeated calls are cheap. */
  text(): string
  /** UTF-8 bytes of the retained content. */
  utf8Length(): number
  /** The last `count` columns of the retained content (fewer when it is narrower). */
  tail(count: number): string
}

/**
 * What one chunk of PTY bytes did to the rendered output: the lines it completed (final, no
 * newline), the live current line, and the prompt markers it contained, in order. The arrays are
 * fresh for every chunk and never change afterwards, so consumers may keep them by reference.
 */
export interface SanitizedChunk {
  /** Lines completed by this chunk, oldest first, without their newline. */
  readonly lines: readonly string[]
  /** UTF-8 bytes of each line in `lines`, so consumers need not measure them again. */
  readonly sizes: readonly number[]
  /** Absolute number of `lines[0]` (equal to the line count before this chunk). */
  readonly firstLine: number
  /** Indexes into `lines` of lines whose head was dropped by the line cap (usually empty). */
  readonly clipped: readonly number[]
  /** Prompt markers seen in this chunk, oldest first. */
  readonly markers: readonly PromptMarker[]
  /** The live current (unterminated) line after this chunk. */
  readonly line: PartialLine
}

/** Options of `TerminalSanitizer`. */
export interface TerminalSanitizerOptions {
  /** Columns retained per line; a longer line keeps its tail. Default `DEFAULT_MAX_LINE_LENGTH` (1 Mi). */
  maxLineLength?: number
  /** Screen height of the terminal, for the rows a redraw may repeat; default 40. */
  rows?: number
  /** Screen width of the terminal (where long lines wrap); default 160. */
  cols?: number
}
