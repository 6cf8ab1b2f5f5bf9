import type { ForegroundFacts } from 'dsh-subprocess'
import type { TerminalInputState, TerminalSendResult } from 'dsh-terminal'
import { lookAtInput } from '../input/input-state'
import type { SendBaselines } from './send-baselines'
import type { SendSession } from './send-contract'
import { joinEarlier, type EarlierPart, type SendOutput } from './send-output'
import type { ResultEnding } from './send-transitions'

/**
 * The result one send settles with, assembled once from what it collected: its output (numbered
 * from 1), why it ended, the exit status of what it ran, the input state told, and the earlier
 * output it took when it started (`earlier`). A value: nothing here acts on the session.
 */
export function settledResult(
  ending: ResultEnding,
  input: TerminalInputState | undefined,
  output: SendOutput,
  session: Pick<SendSession, 'stream' | 'status'>,
  baselines: SendBaselines,
  earlier: EarlierPart | undefined,
): TerminalSendResult {
  const { viewport, truncated, ...numbered } = output.settle()
  const result: TerminalSendResult = { viewport, waitReason: ending.reason, sessionStatus: session.status(), truncated, ...numbered }
  const dropped = session.stream.scrollback.droppedLines
  if (dropped > 0 && (numbered.firstLine !== undefined || numbered.outputHead?.firstLine !== undefined)) result.oldestLine = dropped + 1
  if (input) result.input = input
  if (ending.match) result.match = ending.match
  // Only a marker that arrived after this send acted carries the status of what it ran, interrupted
  // or (without input) waited for. A send that never wrote, e.g. because the shell was already gone,
  // reports none: never the status of an earlier command (nor of the one typed-ahead input waited for).
  const { markersBefore } = baselines
  const ownMarkersFrom = markersBefore === undefined ? undefined : markersBefore + (output.passedPrompt ? 1 : 0)
  const status = ownMarkersFrom === undefined ? undefined : session.stream.statusSince(ownMarkersFrom)
  if (status !== undefined) result.exitCode = status
  const shown = joinEarlier(earlier, output.earlier)
  if (shown) {
    result.earlierOutput = shown.output
    result.earlierTruncated = shown.truncated
    if (shown.firstLine !== undefined) result.earlierFirstLine = shown.firstLine
  }
  return result
}

/**
 * Tell what the terminal waits for at a decided ending the marker did not tell: one inspection
 * (none when `known`, the stdin proof's own sample), and a second with the terminal's flags only
 * when a program is proven to read; nothing more once `wanted` says no. `report` hears the state,
 * or `undefined` when the provider could not say.
 */
export function describeInput(
  session: Pick<SendSession, 'inspectForeground' | 'stream'>,
  known: ForegroundFacts | undefined,
  wanted: () => boolean,
  report: (input: TerminalInputState | undefined) => void,
): void {
  lookAtInput((options) => session.inspectForeground(options), session.stream, { known, wanted }).then(report, () => report(undefined))
}
