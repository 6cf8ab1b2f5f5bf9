/**
 * The program a session's terminal belongs to at a moment: what a model needs to know who asks
 * (`python3`, `sudo`, `vim`) and what to signal.
 */
export interface TerminalProgram {
  /** Its name: the basename of `argv[0]` when readable, else the kernel's name for it. */
  readonly name: string
  /** Process id. */
  readonly pid: number
  /** Milliseconds it has run, when the platform says (10 ms resolution on Linux, 1 s on macOS). */
  readonly elapsedMs?: number
}

/** Every kind of {@link TerminalInputState}, as a runtime list for schemas and exhaustive checks. */
export const TERMINAL_INPUT_KINDS = ['prompt', 'continuation', 'password', 'program', 'keys', 'busy'] as const

/** The kind of a {@link TerminalInputState}. */
export type TerminalInputKind = (typeof TERMINAL_INPUT_KINDS)[number]

/**
 * What the terminal is waiting for, so a model types the right thing:
 * - `prompt`: the shell's own prompt; send a command;
 * - `continuation`: the shell needs more of the command (unclosed quote, heredoc, trailing `\`,
 *   open `if`/`for`); send the rest, or Ctrl-C to abandon it;
 * - `password`: a program reads the terminal with echo off (`read -s`, `getpass`, ssh, sudo); a
 *   secret is asked for, which a model must not invent;
 * - `program`: another program reads the terminal line by line (python, node, gdb, `read -p`, a
 *   `[y/N]` question);
 * - `keys`: a program reads single keys (vim, less, top, `read -n1`), `alternateScreen` when it
 *   took over the whole screen;
 * - `busy`: nothing was seen waiting for input; the program in front and whether it is proven not
 *   to read the terminal (`reading: 'no'`, e.g. `sleep`), not proven either way (`unproven`), or on
 *   a platform that cannot tell (`unprovable`, macOS).
 */
export type TerminalInputState =
  | { readonly kind: 'prompt' }
  | { readonly kind: 'continuation' }
  | { readonly kind: 'password'; readonly program?: TerminalProgram }
  | { readonly kind: 'program'; readonly program?: TerminalProgram }
  | { readonly kind: 'keys'; readonly program?: TerminalProgram; readonly alternateScreen: boolean }
  | { readonly kind: 'busy'; readonly program?: TerminalProgram; readonly reading: 'no' | 'unproven' | 'unprovable' }

/**
 * What a send's `waitFor` matched: the matched text and the whole line it is on (the line as far
 * as it had arrived, when the match is on the line the cursor is still on).
 */
export interface TerminalOutputMatch {
  /** The text the pattern matched. */
  readonly text: string
  /** The line holding the match, without its newline. */
  readonly line: string
}
