import type { StdinWaitSyscall } from 'dsh-subprocess'

/** Reads `length` bytes of a process's memory at `address` (a timespec or timeval the wait points at). */
export type MemoryReader = (address: number, length: number) => Buffer | undefined

/** Sanity bound: a timeout beyond this (about 24 days, the largest a Node timer holds) is as good as none. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1

/**
 * The timeout a wait syscall was called with, in whole milliseconds (rounded up), from its
 * arguments: an `int` of milliseconds (poll, epoll_wait, epoll_pwait) or a pointer to a timeval
 * (select) or timespec (pselect6, ppoll, epoll_pwait2) in the caller's memory. A program waiting
 * for a person passes none or refreshes every second or so; one pausing for a machine (a
 * terminal's reply, the rest of an escape sequence) passes a short one. `undefined` when the wait
 * has no timeout (a negative int, a null pointer, `read`), or it could not be read.
 */
export function waitTimeoutMs(name: StdinWaitSyscall, args: readonly bigint[], memory: MemoryReader): number | undefined {
  switch (name) {
    case 'read':
      return undefined
    case 'poll':
      return intMilliseconds(args[2])
    case 'epoll_wait':
    case 'epoll_pwait':
      return intMilliseconds(args[3])
    case 'select':
      return pointedMilliseconds(args[4], memory, MICROSECONDS)
    case 'pselect6':
      return pointedMilliseconds(args[4], memory, NANOSECONDS)
    case 'ppoll':
      return pointedMilliseconds(args[2], memory, NANOSECONDS)
    case 'epoll_pwait2':
      return pointedMilliseconds(args[3], memory, NANOSECONDS)
  }
}

/** Sub-second units of the second field of a timeval and a timespec. */
const MICROSECONDS = 1_000_000n
const NANOSECONDS = 1_000_000_000n

/** The kernel reads an `int` timeout from the low 32 bits of its register; negative waits forever. */
function intMilliseconds(register: bigint | undefined): number | undefined {
  if (register === undefined) return undefined
  const value = BigInt.asIntN(32, register)
  return value < 0n ? undefined : Number(value)
}

/** `{int64 seconds; int64 fraction}` at `pointer` (64-bit ABIs only); a null pointer waits forever. */
function pointedMilliseconds(pointer: bigint | undefined, memory: MemoryReader, perSecond: bigint): number | undefined {
  if (pointer === undefined || pointer === 0n || pointer > BigInt(Number.MAX_SAFE_INTEGER)) return undefined
  const bytes = memory(Number(pointer), 16)
  if (!bytes) return undefined
  const seconds = bytes.readBigInt64LE(0)
  const fraction = bytes.readBigInt64LE(8)
  if (seconds < 0n || fraction < 0n || fraction >= perSecond) return undefined
  const perMillisecond = perSecond / 1000n
  const milliseconds = seconds * 1000n + (fraction + perMillisecond - 1n) / perMillisecond
  return milliseconds > BigInt(MAX_TIMEOUT_MS) ? undefined : Number(milliseconds)
}
