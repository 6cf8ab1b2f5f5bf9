import type { StdinWaitSyscall } from 'dsh-subprocess'

/** Syscall number → wait name, for one CPU architecture. */
export type SyscallTable = ReadonlyMap<number, StdinWaitSyscall>

/** x86-64 numbers from the kernel's `syscall_64.tbl`. */
const X64: SyscallTable = new Map([
  [0, 'read'],
  [7, 'poll'],
  [23, 'select'],
  [232, 'epoll_wait'],
  [270, 'pselect6'],
  [271, 'ppoll'],
  [281, 'epoll_pwait'],
  [441, 'epoll_pwait2'],
])

/** arm64 numbers from the generic `unistd.h` (arm64 has no select, poll or epoll_wait). */
const ARM64: SyscallTable = new Map([
  [63, 'read'],
  [72, 'pselect6'],
  [73, 'ppoll'],
  [22, 'epoll_pwait'],
  [441, 'epoll_pwait2'],
])

/** The wait table for a Node `process.arch`, or `undefined` where stdin waits cannot be proven. */
export function syscallTable(arch: string): SyscallTable | undefined {
  if (arch === 'x64') return X64
  if (arch === 'arm64') return ARM64
  return undefined
}
