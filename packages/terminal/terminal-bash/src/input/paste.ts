/** What a terminal writes before pasted text once a program enabled bracketed paste (`CSI ? 2004 h`). */
export const PASTE_START = '\x1b[200~'

/** What a terminal writes after pasted text; the program treats everything before it as typed-in text. */
export const PASTE_END = '\x1b[201~'

/** The line break a terminal writes inside a paste (xterm and xterm.js turn `\n` and `\r\n` into it). */
const PASTE_LINE_BREAK = '\r'

/**
 * Whether `text` goes to the program as a paste rather than typed: only when the program asked for
 * bracketed paste, the text has a line break before its end (one trailing line break is an Enter,
 * as typed), and typing it line by line could change what the program receives: some line starts
 * with indentation or the text holds a tab. Typed, an indented block meets the program's own
 * auto-indent (Python 3.13, vim) and its blank lines end the block early; a tab asks readline to
 * complete. Plain lines stay typed, because some programs that ask for pastes take them as one line
 * (gdb 13 reads `print 1\nprint 2` pasted as one expression), while each typed line works.
 */
export function pastesText(text: string, bracketedPaste: boolean): boolean {
  if (!bracketedPaste) return false
  const body = withoutFinalLineBreak(text)
  return /[\r\n]/.test(body) && (/(^|[\r\n])[ \t]/.test(body) || body.includes('\t'))
}

/** Whether the text ends with a line break (`\n`, `\r` or `\r\n`): typed, that is the final Enter. */
export function endsWithLineBreak(text: string): boolean {
  return text.endsWith('\n') || text.endsWith('\r')
}

/**
 * `text` as one bracketed paste. Line breaks become `\r`, as terminals paste them. When Enter
 * follows (`enterFollows`), the text's final line break is that Enter, and the paste still ends with
 * exactly one line break, so a REPL that keeps collecting lines (Python 3.13 waits for one after a
 * block's last line) runs the whole paste on that one Enter; bash ignores the empty last line. Every
 * paste start or end sequence inside the text is removed (repeatedly, so removing one cannot join
 * another): the text cannot end the paste early and have the rest typed as keys.
 */
export function bracketPaste(text: string, enterFollows: boolean): string {
  let content = withoutPasteMarkers(text)
  if (enterFollows) {
    content = withoutFinalLineBreak(content)
    if (!endsWithLineBreak(content)) content += PASTE_LINE_BREAK
  }
  return PASTE_START + content.replace(/\r?\n/g, PASTE_LINE_BREAK) + PASTE_END
}

/** The text without its one final line break, if it has one. */
function withoutFinalLineBreak(text: string): string {
  return text.replace(/(\r\n|\r|\n)$/, '')
}

/** The text with every paste start and end sequence taken out, until none is left. */
function withoutPasteMarkers(text: string): string {
  let result = text
  while (result.includes(PASTE_START) || result.includes(PASTE_END)) {
    result = result.replaceAll(PASTE_START, '').replaceAll(PASTE_END, '')
  }
  return result
}
