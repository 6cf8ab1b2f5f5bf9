import type { ProcessRecord, SignalDisposition } from '../inspector'
import { dispositionOf } from './status-parser'

/**
 * Parse `/proc/<pid>/stat`. The command name sits in parentheses and may itself contain spaces
 * and `)`, so fields are split only after the last `)`. Anything malformed is `undefined`.
 */
export function parseStat(text: string | undefined): ProcessRecord | undefined {
  if (!text) return undefined
  const open = text.indexOf(' (')
  const close = text.lastIndexOf(')')
  if (open <= 0 || close < open) return undefined
  const pid = integer(text.slice(0, open))
  const fields = text
    .slice(close + 2)
    .trim()
    .split(' ')
  // fields[0] is field 3 (state) of proc(5); starttime (field 22) is fields[19].
  if (pid === undefined || pid <= 0 || fields.length < 20) return undefined
  const state = fields[0]
  if (state?.length !== 1) return undefined
  const ppid = integer(fields[1])
  const pgid = integer(fields[2])
  const sid = integer(fields[3])
  const ttyNr = integer(fields[4])
  const tpgid = integer(fields[5])
  const threads = integer(fields[17])
  const started = fields[19]
  if (ppid === undefined || pgid === undefined || sid === undefined || ttyNr === undefined || tpgid === undefined) return undefined
  if (threads === undefined || threads < 0 || !started || !/^\d+$/.test(started)) return undefined
  return {
    pid,
    started,
    ppid,
    pgid,
    sid,
    tpgid,
    ttyNr,
    zombie: state === 'Z' || state === 'X' || state === 'x',
    stopped: state === 'T' || state === 't',
    threads: Math.max(threads, 1),
    command: text.slice(open + 2, close),
    disposition: statDisposition(fields),
  }
}

/**
 * The disposition from stat's `blocked`, `sigignore` and `sigcatch` (fields 32–34: decimal masks of
 * signals 1–31, which hold SIGHUP and SIGTERM), so teardown needs no `status` read. `undefined`
 * when the line is shorter (fixtures) or a mask is malformed.
 */
function statDisposition(fields: readonly string[]): SignalDisposition | undefined {
  const masks = [fields[29], fields[30], fields[31]]
  if (!masks.every((value) => value !== undefined && /^\d{1,10}$/.test(value))) return undefined
  const [blocked, ignored, caught] = masks.map((value) => BigInt(value as string)) as [bigint, bigint, bigint]
  return dispositionOf(ignored, blocked, caught)
}

function integer(text: string | undefined): number | undefined {
  if (text === undefined || !/^-?\d+$/.test(text)) return undefined
  const value = Number(text)
  return Number.isSafeInteger(value) ? value : undefined
}
