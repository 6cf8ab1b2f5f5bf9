import type { KnownSyscall, StdinWaitSyscall } from 'dsh-subprocess'

/** Syscall number → name, for one CPU architecture. */
export type SyscallTable = ReadonlyMap<number, KnownSyscall>

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
  [34, 'pause'],
  [35, 'nanosleep'],
  [42, 'connect'],
  [43, 'accept'],
  [45, 'recvfrom'],
  [47, 'recvmsg'],
  [61, 'wait4'],
  [128, 'rt_sigtimedwait'],
  [130, 'rt_sigsuspend'],
  [202, 'futex'],
  [230, 'clock_nanosleep'],
  [247, 'waitid'],
  [288, 'accept4'],
  [449, 'futex_waitv'],
])

/** arm64 numbers from the generic `unistd.h` (arm64 has no select, poll, epoll_wait or pause). */
const ARM64: SyscallTable = new Map([
  [63, 'read'],
  [72, 'pselect6'],
  [73, 'ppoll'],
  [22, 'epoll_pwait'],
  [441, 'epoll_pwait2'],
  [95, 'waitid'],
  [98, 'futex'],
  [101, 'nanosleep'],
  [115, 'clock_nanosleep'],
  [133, 'rt_sigsuspend'],
  [137, 'rt_sigtimedwait'],
  [202, 'accept'],
  [203, 'connect'],
  [207, 'recvfrom'],
  [212, 'recvmsg'],
  [242, 'accept4'],
  [260, 'wait4'],
  [449, 'futex_waitv'],
])

/** The table for a Node `process.arch`, or `undefined` where syscalls cannot be decoded (then no wait is proven). */
export function syscallTable(arch: string): SyscallTable | undefined {
  if (arch === 'x64') return X64
  if (arch === 'arm64') return ARM64
  return undefined
}

const STDIN_WAITS: ReadonlySet<KnownSyscall> = new Set<StdinWaitSyscall>([
  'read',
  'select',
  'pselect6',
  'poll',
  'ppoll',
  'epoll_wait',
  'epoll_pwait',
  'epoll_pwait2',
])

/** True for the syscalls whose fds decide whether the thread waits for this terminal. */
export function isStdinWaitSyscall(name: KnownSyscall): name is StdinWaitSyscall {
  return STDIN_WAITS.has(name)
}
