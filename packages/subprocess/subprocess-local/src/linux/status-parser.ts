import type { SignalDisposition } from '../inspector'

/** Context-switch counters of one thread, from `/proc/<pid>/task/<tid>/status`. */
export interface SwitchCounters {
  /** Times the thread blocked (gave up the CPU voluntarily). */
  readonly voluntary: number
  /** Times the thread was preempted. */
  readonly nonvoluntary: number
}

/** Parse both context-switch counters; `undefined` if either is missing or malformed. */
export function parseSwitchCounters(text: string | undefined): SwitchCounters | undefined {
  if (!text) return undefined
  const voluntary = counter(text, /^voluntary_ctxt_switches:\s*(\d+)\s*$/m)
  const nonvoluntary = counter(text, /^nonvoluntary_ctxt_switches:\s*(\d+)\s*$/m)
  if (voluntary === undefined || nonvoluntary === undefined) return undefined
  return { voluntary, nonvoluntary }
}

/**
 * The pid in the innermost pid namespace from the `NSpid:` line (outermost first); `undefined`
 * when the process is in its reader's namespace, or the line is missing (kernels before 4.1).
 */
export function parseNamespacePid(text: string | undefined): number | undefined {
  const line = text && /^NSpid:\s*([\d\s]+?)\s*$/m.exec(text)?.[1]
  if (!line) return undefined
  const pids = line.split(/\s+/)
  if (pids.length < 2) return undefined
  const innermost = Number(pids[pids.length - 1])
  return Number.isSafeInteger(innermost) && innermost > 0 ? innermost : undefined
}

const SIGHUP_BIT = 1n << 0n
const SIGTERM_BIT = 1n << 14n

/**
 * Whether SIGTERM/SIGHUP would be wasted on a process: ignored (`SigIgn`), or blocked (`SigBlk`)
 * with no handler (`SigCgt`) — then nothing runs on delivery and SIGKILL ends it the same way.
 * A caught signal that is blocked only for a moment (shells block everything around `fork`)
 * still gets its grace. `undefined` when the masks are unreadable.
 */
export function parseDisposition(text: string | undefined): SignalDisposition | undefined {
  if (!text) return undefined
  const ignored = mask(text, /^SigIgn:\s*([0-9a-fA-F]+)\s*$/m)
  const blocked = mask(text, /^SigBlk:\s*([0-9a-fA-F]+)\s*$/m)
  const caught = mask(text, /^SigCgt:\s*([0-9a-fA-F]+)\s*$/m)
  if (ignored === undefined || blocked === undefined || caught === undefined) return undefined
  return dispositionOf(ignored, blocked, caught)
}

/** The rule of {@link parseDisposition} over the three masks (bit n−1 is signal n), wherever they were read. */
export function dispositionOf(ignored: bigint, blocked: bigint, caught: bigint): SignalDisposition {
  const inert = ignored | (blocked & ~caught)
  const termIgnored = (inert & SIGTERM_BIT) !== 0n
  return { termIgnored, hupIgnored: (inert & SIGHUP_BIT) !== 0n, termHandled: !termIgnored && (caught & SIGTERM_BIT) !== 0n }
}

function counter(text: string, pattern: RegExp): number | undefined {
  const match = pattern.exec(text)
  if (!match?.[1]) return undefined
  const value = Number(match[1])
  return Number.isSafeInteger(value) ? value : undefined
}

function mask(text: string, pattern: RegExp): bigint | undefined {
  const match = pattern.exec(text)
  return match?.[1] ? BigInt(`0x${match[1]}`) : undefined
}
