import type { TerminalEarlierOutput, TerminalScreen, TerminalSendOperation, TerminalSendResult } from 'dsh-terminal'

/** What {@link showingScreen} reads from the session when a send settles. */
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

/**
 * The operation as the session hands it out: its result carries `screen` when {@link showsScreen}
 * says so (`movesBefore`: the source's count when the send started). `released` settles only after
 * that `done`, so the send's reservation covers rendering the screen too (the registry drops it once
 * both settled). `earlier` is the session's earlier output the send took when it started.
 */
export function showingScreen(
  operation: TerminalSendOperation & { readonly released: Promise<void> },
  source: ScreenSource,
  movesBefore: number,
  earlier?: TerminalEarlierOutput,
): TerminalSendOperation & { readonly released: Promise<void> } {
  const done = operation.done.then(async (result) => {
    if (!showsScreen(result, source, movesBefore)) return result
    try {
      return { ...result, screen: await source.snapshot() }
    } catch {
      // The session closed meanwhile: the result stands without a screen.
      return result
    }
  })
  const released = Promise.all([operation.released, done.then(ignore, ignore)]).then(ignore)
  return new ScreenShowingOperation(operation, done, released, earlier)
}

/** The operation with the screen-carrying `done`: its methods live on the prototype, so no closure is made per send. */
class ScreenShowingOperation implements TerminalSendOperation {
  constructor(
    readonly operation: TerminalSendOperation,
    readonly done: Promise<TerminalSendResult>,
    readonly released: Promise<void>,
    readonly earlier: TerminalEarlierOutput | undefined,
  ) {}

  readOutput(): ReturnType<TerminalSendOperation['readOutput']> {
    return this.operation.readOutput()
  }

  cancel(): boolean {
    return this.operation.cancel()
  }
}

function ignore(): void {}
