import type { ForegroundProgram, StdinWait } from 'dsh-subprocess'
import type { ProcessRecord } from '../inspector'
import { CLOCK_TICKS_PER_SECOND, type ProcSource, uptimeSeconds } from './proc-source'
import { parseNamespacePid } from './status-parser'

/**
 * Name the program in front: the process of the first proven wait, else the group leader, else the
 * first live member. `comm` comes from the stat already read; `argv[0]` from `/proc/<pid>/cmdline`
 * (as the process shows it now: a program may rewrite it); the age from `starttime` against
 * `/proc/uptime`, both counted from boot; its pid inside a sandbox from `NSpid`. Three small reads,
 * for one process only.
 */
export function foregroundProgram(
  source: ProcSource,
  group: readonly ProcessRecord[],
  processGroupId: number,
  waits: readonly StdinWait[],
): ForegroundProgram | undefined {
  const waiting = waits.length > 0 ? group.find((record) => record.pid === waits[0]!.pid) : undefined
  const leader = group.find((record) => record.pid === processGroupId)
  const chosen = waiting ?? leader ?? group[0]
  if (!chosen || chosen.command === undefined) return undefined
  const role = chosen === waiting ? 'waiting' : chosen === leader ? 'leader' : 'member'
  const argv0 = firstArgument(source.text(`/proc/${chosen.pid}/cmdline`))
  const namespacePid = parseNamespacePid(source.text(`/proc/${chosen.pid}/status`))
  const uptime = uptimeSeconds(source)
  const elapsedMs = uptime === undefined ? undefined : Math.max(0, Math.round(uptime * 1000 - (Number(chosen.started) * 1000) / CLOCK_TICKS_PER_SECOND))
  return {
    pid: chosen.pid,
    started: chosen.started,
    role,
    command: utf8(chosen.command),
    ...(argv0 === undefined ? {} : { argv0 }),
    ...(elapsedMs === undefined ? {} : { elapsedMs }),
    ...(namespacePid === undefined ? {} : { namespacePid }),
  }
}

/** Basename of the first NUL-terminated argument; `undefined` when unreadable or empty (a kernel thread, a zombie). */
function firstArgument(cmdline: string | undefined): string | undefined {
  const first = cmdline?.split('\0')[0]
  if (!first) return undefined
  const trimmed = first.replace(/\/+$/, '')
  const base = trimmed.slice(trimmed.lastIndexOf('/') + 1)
  return utf8(base || first)
}

/** /proc text is read as latin1 (byte for byte); names are shown as the UTF-8 they usually are. */
function utf8(text: string): string {
  return Buffer.from(text, 'latin1').toString('utf8')
}
