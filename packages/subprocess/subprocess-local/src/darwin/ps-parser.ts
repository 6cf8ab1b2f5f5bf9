import type { ProcessRecord } from '../inspector'

/** The `ps -o` column list the parser expects, headers suppressed; `lstart` last since it has spaces. */
export const PS_COLUMNS = 'pid=,ppid=,pgid=,tpgid=,stat=,lstart='

const LINE = /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(-?\d+)\s+(\S+)\s+(\S.*?)\s*$/

/**
 * Parse one `ps -o pid=,ppid=,pgid=,tpgid=,stat=,lstart=` line. `lstart` (start time to the
 * second, e.g. `Thu Jul 16 10:00:00 2026`) is the start identity; whitespace is normalised
 * because ps pads single-digit days. Malformed lines are `undefined`.
 */
export function parsePsLine(line: string): ProcessRecord | undefined {
  const match = LINE.exec(line)
  if (!match) return undefined
  const [, pid, ppid, pgid, tpgid, stat, lstart] = match
  if (!pid || !ppid || !pgid || !tpgid || !stat || !lstart) return undefined
  if (!/^\S{3} \S{3} +\d{1,2} \d{2}:\d{2}:\d{2} \d{4}$/.test(lstart)) return undefined
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
