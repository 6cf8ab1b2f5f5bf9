import type { ProcessRecord } from './inspector'

/**
 * True for a session leader whose controlling terminal has a foreground group — the only state in
 * which its `tpgid` names a group of this PTY. (macOS reports no session id: a foreground group
 * is the best available evidence there.)
 */
export function ownsTerminal(record: ProcessRecord): boolean {
  if (record.sid === undefined) return record.tpgid > 0
  return record.sid === record.pid && record.ttyNr !== 0 && record.tpgid > 0
}
