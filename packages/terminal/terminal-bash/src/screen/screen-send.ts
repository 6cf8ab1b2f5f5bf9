import type { TerminalScreen, TerminalSendResult } from 'dsh-terminal'

/** What a settling send reads from the session to decide on, and render, its result's screen ({@link showsScreen}). */
export interface ScreenSource {
  /** A full-screen program switched to the alternate screen and has not switched back. */
  alternateScreen(): boolean
  /** Row-changing cursor moves and scroll regions on the normal screen so far (a count that only grows). */
  verticalMoves(): number
  /** The screen once every byte that arrived so far is rendered; rejects once the session's emulator is gone. */
  snapshot(): Promise<TerminalScreen>
}

/**
 * A full-screen program holds the terminal at settlement: it drew on the alternate screen, or it
 * reads single keys. Its redraws make the byte delta unreadable; the screen is what a person sees.
 */
export function heldByFullScreenProgram(result: TerminalSendResult, source: Pick<ScreenSource, 'alternateScreen'>): boolean {
  return result.input?.kind === 'keys' || (result.sessionStatus.kind === 'running' && source.alternateScreen())
}

/**
 * The result shows the screen: a full-screen program holds the terminal, or a program moved the
 * cursor to another row on the normal screen during the send (`movesBefore` is the count when it
 * started): a dialog, a progress table or a readline redraw drew in place, and its lines are
 * fragments in drawing order while the screen is what a person sees.
 */
export function showsScreen(result: TerminalSendResult, source: Pick<ScreenSource, 'alternateScreen' | 'verticalMoves'>, movesBefore: number): boolean {
  return heldByFullScreenProgram(result, source) || (result.sessionStatus.kind === 'running' && source.verticalMoves() > movesBefore)
}
