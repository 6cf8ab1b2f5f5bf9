import type { ProcessRecord } from '../inspector'

/**
 * The `ps -o` column list the parser expects, headers suppressed. `lstart` has spaces but a fixed
 * shape; `ucomm` (the accounting name, which may hold spaces too) comes last, so it is never cut.
 */
export const PS_COLUMNS = 'pid=,ppid=,pgid=,tpgid=,stat=,lstart=,ucomm='

const LINE = /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(-?\d+)\s+(\S+)\s+(\S{3}\s+\S{3}\s+\d{1,2}\s+\d{2}:\d{2}:\d{2}\s+\d{4})(?:\s+(\S.*?))?\s*$/

/**
 * Parse one `ps -o pid=,ppid=,pgid=,tpgid=,stat=,lstart=,ucomm=` line. `lstart` (start time to the
 * second, e.g. `Thu Jul 16 10:00:00 2026`) is the start identity; whitespace is normalised
 * because ps pads single-digit days. A line without `ucomm` is accepted (no command name).
 * Malformed lines are `undefined`.
 */
export function parsePsLine(line: string): ProcessRecord | undefined {
  const match = LINE.exec(line)
  if (!match) return undefined
  const [, pid, ppid, pgid, tpgid, stat, lstart, ucomm] = match
  if (!pid || !ppid || !pgid || !tpgid || !stat || !lstart) return undefined
  return {
    pid: Number(pid),
    started: lstart.replace(/\s+/g, ' '),
    ppid: Number(ppid),
    pgid: Number(pgid),
    sid: undefined,
    tpgid: Number(tpgid),
    ttyNr: undefined,
    zombie: stat.startsWith('Z'),
    stopped: stat.startsWith('T'),
    threads: 1,
    command: ucomm,
  }
}

/** Parse a whole ps listing into records by pid, skipping malformed lines. */
export function parsePsTable(output: string): Map<number, ProcessRecord> {
  const table = new Map<number, ProcessRecord>()
  for (const line of output.split('\n')) {
    const record = parsePsLine(line)
    if (record) table.set(record.pid, record)
  }
  return table
}
