import type { TerminalSendRequest } from 'dsh-terminal'
import { encodeKeys } from './keys'
import { bracketPaste, endsWithLineBreak, pastesText } from './paste'

/** The Enter sequence: a carriage return, as a terminal sends it (the line discipline maps it). */
export const ENTER = '\r'

/**
 * The input modes a program set on the terminal that change what a key or a paste must look like,
 * as the session's screen model tracks them from the program's output.
 */
export interface KeyModes {
  /** DECCKM (`CSI ? 1 h`): arrows and Home/End send `ESC O A` instead of `ESC [ A`. */
  readonly applicationCursorKeys: boolean
  /** DECKPAM (`ESC =`): the keypad sends application sequences (no key name here is a keypad key). */
  readonly applicationKeypad: boolean
  /** `CSI ? 2004 h`: the program wants pasted text between `ESC [200~` and `ESC [201~`. */
  readonly bracketedPaste: boolean
}

/** Modes of a terminal nobody changed (what a session starts with). */
export const DEFAULT_KEY_MODES: KeyModes = { applicationCursorKeys: false, applicationKeypad: false, bracketedPaste: false }

/**
 * The bytes one send writes to the terminal, or undefined when it writes nothing (an empty text
 * without submit, a resize-only or a wait-only send). `keys` (checked by the registry) are encoded for
 * `modes`. Text is typed as it is, then Enter when `submit`; multi-line text that typing would
 * alter goes as one bracketed paste when the program asked for pastes (see `pastesText`). A line
 * reader (a REPL, `fullScreen` false) then gets Enter when `submit` or when the text ended with a
 * line break; an editor on the alternate screen (`fullScreen`) gets the text's own line breaks and
 * no more: its final line break is its last Enter, as typed by hand. Given as a function, `modes`
 * is read only when the bytes depend on it (keys, or text that a paste would change): reading a
 * session's live modes first parses the emulator's backlog.
 */
export function sendInput(request: TerminalSendRequest, modes: KeyModes | (() => KeyModes), fullScreen = false): string | undefined {
  if (request.kind === 'keys') return encodeKeys(request.keys, modesNow(modes))
  if (request.kind === 'resize' || request.kind === 'wait' || (request.text === '' && !request.submit)) return undefined
  if (pastesText(request.text, true) && modesNow(modes).bracketedPaste) {
    if (fullScreen) return bracketPaste(request.text, false) + (request.submit && !endsWithLineBreak(request.text) ? ENTER : '')
    const enter = request.submit || endsWithLineBreak(request.text)
    return bracketPaste(request.text, enter) + (enter ? ENTER : '')
  }
  return request.text + (request.submit ? ENTER : '')
}

/** `modes` as they are now: read (and the emulator's backlog parsed) only when asked. */
function modesNow(modes: KeyModes | (() => KeyModes)): KeyModes {
  return typeof modes === 'function' ? modes() : modes
}
