import type { TerminalReadRequest, TerminalReadResult } from 'dsh-terminal'
import type { ScrollbackRing } from '../output/index'
import { lineIndexOf, lineNumberOf } from '../output/line-numbers'

/** Lines a read returns when the caller gives no `count` (the same default as `terminal_read`). */
export const DEFAULT_READ_LINES = 500

/**
 * One bounded page of `scrollback` for a read, back from the newest line or forward from
 * `fromLine`, numbered from 1 = the first line the session printed (numbers survive eviction).
 * `showsNewest`: the page ends at the newest line, so it showed what arrived between sends.
 */
export function readScrollbackPage(
  scrollback: ScrollbackRing,
  request: TerminalReadRequest,
  maxBytes: number,
): { result: TerminalReadResult; showsNewest: boolean } {
  const count = request.count ?? DEFAULT_READ_LINES
  const forward = request.fromLine !== undefined
  const page = forward
    ? scrollback.readFrom({ fromLine: lineIndexOf(request.fromLine as number), count, maxBytes })
    : scrollback.read({ offset: request.offset ?? 0, count, maxBytes })
  const empty = page.lineEnd <= page.lineBegin
  const showsNewest = forward ? !empty && page.lineEnd === page.totalLines : (request.offset ?? 0) === 0
  const result = {
    text: page.text,
    totalLines: page.totalLines,
    // The ring's end is exclusive: the page's last line is the one before it.
    lineBegin: empty ? 0 : lineNumberOf(page.lineBegin),
    lineEnd: empty ? 0 : lineNumberOf(page.lineEnd - 1),
    oldestLine: lineNumberOf(scrollback.droppedLines),
    truncated: page.truncated,
  }
  return { result, showsNewest }
}
