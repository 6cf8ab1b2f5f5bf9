import type { StdinWait, StdinWaitSyscall, ThreadSample } from 'dsh-subprocess'
import type { ProcessRecord } from '../inspector'
import { parseEpollTargets } from './fdinfo-parser'
import type { FileIdentity, ProcSource } from './proc-source'
import { parseSwitchCounters } from './status-parser'
import { parseSyscall } from './syscall-parser'
import { isStdinWaitSyscall, type SyscallTable } from './syscall-table'
import { waitTimeoutMs } from './wait-timeout'

/** `/dev/tty` (major 5, minor 0): an fd opened through it reads the process's controlling terminal. */
export const DEV_TTY = (5 << 8) | 0

const POLLIN = 0x1
const EPOLLIN = 0x1
/** Sanity bounds on argument-derived reads: larger values are treated as malformed. */
const MAX_POLL_FDS = 4096
const MAX_SELECT_FDS = 65_536

/** Per-inspection context shared by every thread of the foreground group. */
export interface WaitContext {
  readonly source: ProcSource
  readonly table: SyscallTable
  /** Device number of this session's PTY. */
  readonly terminal: number
  /** Memo of fd identities by `pid:fd`, so threads sharing a table are stat'ed once. */
  readonly files: Map<string, FileIdentity | undefined>
}

/** How a wait syscall's fds relate to the terminal: proven on `fd`, proven not, or undecidable. */
type FdVerdict = { readonly fd: number } | 'none' | 'unknown'

/**
 * Sample one thread: is it blocked waiting for input from this terminal? Proof requires a
 * recognised wait syscall whose fd (read), fd set (select/pselect6, from process memory), pollfd
 * array (poll/ppoll, from process memory) or epoll interest list (fdinfo) contains an fd that is
 * this terminal, or `/dev/tty` in a process controlled by it, with an input event. Counters are
 * attached to every thread blocked in a wait syscall so a later sample can tell whether it ran.
 * A proven wait carries the timeout it was called with, if any: it ends by itself then.
 * The opposite is proven too (`notReading`): a wait whose fds are all other files, or any other
 * named syscall — the table names only syscalls that take no terminal input (sleeps, child waits,
 * futexes, signal waits, sockets); an unnamed one (readv, io_uring_enter, …) proves nothing.
 */
export function sampleThread(context: WaitContext, process: ProcessRecord, tid: number): ThreadSample {
  const identity = { pid: process.pid, tid, started: process.started }
  const state = parseSyscall(context.source.text(`/proc/${process.pid}/task/${tid}/syscall`))
  if (!state) return { ...identity, state: 'unknown' }
  if (state.kind === 'running') return { ...identity, state: 'running' }
  if (state.kind === 'user') return { ...identity, state: 'blocked' }
  const name = context.table.get(state.nr)
  if (!name) return { ...identity, state: 'blocked', syscall: state.nr }
  if (!isStdinWaitSyscall(name)) return { ...identity, state: 'blocked', syscall: state.nr, syscallName: name, notReading: true }
  const counters = parseSwitchCounters(context.source.text(`/proc/${process.pid}/task/${tid}/status`))
  const verdict = waitVerdict(context, process, name, state.args)
  if (verdict === 'unknown' || !counters) {
    const known = verdict === 'none' ? { state: 'blocked' as const, notReading: true } : { state: 'unknown' as const }
    return { ...identity, ...known, syscall: state.nr, syscallName: name }
  }
  const sample = {
    ...identity,
    syscall: state.nr,
    syscallName: name,
    voluntaryCtxtSwitches: counters.voluntary,
    nonvoluntaryCtxtSwitches: counters.nonvoluntary,
  }
  if (verdict === 'none') return { ...sample, state: 'blocked', notReading: true }
  const timeoutMs = waitTimeoutMs(name, state.args, (address, length) => context.source.bytes(`/proc/${process.pid}/mem`, address, length))
  return { ...sample, state: 'stdin-wait', fd: verdict.fd, ...(timeoutMs === undefined ? {} : { timeoutMs }) } satisfies StdinWait
}

function waitVerdict(context: WaitContext, process: ProcessRecord, name: StdinWaitSyscall, args: readonly bigint[]): FdVerdict {
  switch (name) {
    case 'read': {
      const fd = smallInt(args[0], 2 ** 31 - 1)
      return fd === undefined ? 'unknown' : firstTerminalFd(context, process, [fd])
    }
    case 'select':
    case 'pselect6':
      return selectVerdict(context, process, args)
    case 'poll':
    case 'ppoll':
      return pollVerdict(context, process, args)
    case 'epoll_wait':
    case 'epoll_pwait':
    case 'epoll_pwait2':
      return epollVerdict(context, process, args)
  }
}

/** `select(nfds, readfds, …)`: the read set is a little-endian bit array in the caller's memory. */
function selectVerdict(context: WaitContext, process: ProcessRecord, args: readonly bigint[]): FdVerdict {
  const nfds = smallInt(args[0], MAX_SELECT_FDS)
  const address = pointer(args[1])
  if (nfds === undefined || address === undefined) return 'unknown'
  if (nfds === 0 || address === 0) return 'none'
  const bits = context.source.bytes(`/proc/${process.pid}/mem`, address, Math.ceil(nfds / 8))
  if (!bits) return 'unknown'
  const fds: number[] = []
  for (let fd = 0; fd < nfds; fd++) {
    if ((bits[fd >> 3]! >> (fd & 7)) & 1) fds.push(fd)
  }
  return firstTerminalFd(context, process, fds)
}

/** `poll(fds, nfds, …)`: an array of `{int fd; short events; short revents}` in the caller's memory. */
function pollVerdict(context: WaitContext, process: ProcessRecord, args: readonly bigint[]): FdVerdict {
  const address = pointer(args[0])
  const nfds = smallInt(args[1], MAX_POLL_FDS)
  if (address === undefined || nfds === undefined) return 'unknown'
  if (nfds === 0) return 'none'
  const entries = context.source.bytes(`/proc/${process.pid}/mem`, address, nfds * 8)
  if (!entries) return 'unknown'
  const fds: number[] = []
  for (let index = 0; index < nfds; index++) {
    const fd = entries.readInt32LE(index * 8)
    const events = entries.readInt16LE(index * 8 + 4)
    if (fd >= 0 && events & POLLIN) fds.push(fd)
  }
  return firstTerminalFd(context, process, fds)
}

/** `epoll_wait(epfd, …)`: the interest list is in the epoll fd's fdinfo, with each target's inode. */
function epollVerdict(context: WaitContext, process: ProcessRecord, args: readonly bigint[]): FdVerdict {
  const epfd = smallInt(args[0], 2 ** 31 - 1)
  if (epfd === undefined) return 'unknown'
  const targets = parseEpollTargets(context.source.text(`/proc/${process.pid}/fdinfo/${epfd}`))
  if (!targets) return 'unknown'
  const candidates = targets.filter((target) => target.events & EPOLLIN)
  let verdict: FdVerdict = 'none'
  for (const target of candidates) {
    const file = fileOf(context, process.pid, target.fd)
    if (!file || (target.ino !== undefined && file.ino !== target.ino)) {
      verdict = 'unknown'
      continue
    }
    if (isTerminal(context, process, file)) return { fd: target.fd }
  }
  return verdict
}

/** The lowest candidate fd that is this terminal; `unknown` if one could not be checked and none proved it. */
function firstTerminalFd(context: WaitContext, process: ProcessRecord, fds: readonly number[]): FdVerdict {
  let verdict: FdVerdict = 'none'
  for (const fd of fds) {
    const file = fileOf(context, process.pid, fd)
    if (!file) verdict = 'unknown'
    else if (isTerminal(context, process, file)) return { fd }
  }
  return verdict
}

function isTerminal(context: WaitContext, process: ProcessRecord, file: FileIdentity): boolean {
  if (file.rdev === context.terminal) return true
  return file.rdev === DEV_TTY && process.ttyNr === context.terminal
}

function fileOf(context: WaitContext, pid: number, fd: number): FileIdentity | undefined {
  const key = `${pid}:${fd}`
  if (!context.files.has(key)) context.files.set(key, context.source.file(`/proc/${pid}/fd/${fd}`))
  return context.files.get(key)
}

function smallInt(value: bigint | undefined, max: number): number | undefined {
  if (value === undefined || value < 0n || value > BigInt(max)) return undefined
  return Number(value)
}

function pointer(value: bigint | undefined): number | undefined {
  if (value === undefined || value > BigInt(Number.MAX_SAFE_INTEGER)) return undefined
  return Number(value)
}
