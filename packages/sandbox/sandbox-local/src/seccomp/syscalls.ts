/**
 * Syscall numbers the filter refers to, per architecture. Sources: the kernel's
 * arch/x86/entry/syscalls/syscall_64.tbl (x86_64) and include/uapi/asm-generic/unistd.h (aarch64,
 * which uses the generic table); numbers from 403 up are the same on every architecture. A name
 * missing from an architecture's table does not exist there (e.g. iopl on aarch64).
 */

/** The architectures the filter has tables for, by their kernel names. */
export type SeccompArchitecture = 'x86_64' | 'aarch64'

/** Syscalls added since the tables were unified (Linux 5.1): the same number on every architecture. */
const UNIFIED = {
  io_uring_setup: 425,
  io_uring_enter: 426,
  io_uring_register: 427,
  open_tree: 428,
  move_mount: 429,
  fsopen: 430,
  fsconfig: 431,
  fsmount: 432,
  fspick: 433,
  clone3: 435,
  mount_setattr: 442,
  quotactl_fd: 443,
} as const

/** x86_64: the 64-bit ABI only (x32 numbers carry bit 30 and are refused as a whole). */
const X86_64 = {
  ioctl: 16,
  socket: 41,
  clone: 56,
  syslog: 103,
  uselib: 134,
  personality: 135,
  vhangup: 153,
  pivot_root: 155,
  _sysctl: 156,
  adjtimex: 159,
  acct: 163,
  settimeofday: 164,
  mount: 165,
  umount2: 166,
  swapon: 167,
  swapoff: 168,
  reboot: 169,
  iopl: 172,
  ioperm: 173,
  init_module: 175,
  delete_module: 176,
  quotactl: 179,
  nfsservctl: 180,
  lookup_dcookie: 212,
  clock_settime: 227,
  kexec_load: 246,
  add_key: 248,
  request_key: 249,
  keyctl: 250,
  unshare: 272,
  perf_event_open: 298,
  fanotify_init: 300,
  name_to_handle_at: 303,
  open_by_handle_at: 304,
  clock_adjtime: 305,
  setns: 308,
  finit_module: 313,
  kexec_file_load: 320,
  bpf: 321,
  userfaultfd: 323,
  ...UNIFIED,
} as const

/** aarch64: the generic table; it has no iopl, ioperm, uselib or _sysctl. */
const AARCH64 = {
  lookup_dcookie: 18,
  ioctl: 29,
  umount2: 39,
  mount: 40,
  pivot_root: 41,
  nfsservctl: 42,
  vhangup: 58,
  quotactl: 60,
  acct: 89,
  personality: 92,
  unshare: 97,
  kexec_load: 104,
  init_module: 105,
  delete_module: 106,
  clock_settime: 112,
  syslog: 116,
  reboot: 142,
  settimeofday: 170,
  adjtimex: 171,
  socket: 198,
  add_key: 217,
  request_key: 218,
  keyctl: 219,
  clone: 220,
  swapon: 224,
  swapoff: 225,
  perf_event_open: 241,
  fanotify_init: 262,
  name_to_handle_at: 264,
  open_by_handle_at: 265,
  clock_adjtime: 266,
  setns: 268,
  finit_module: 273,
  bpf: 280,
  userfaultfd: 282,
  kexec_file_load: 294,
  ...UNIFIED,
} as const

/** Every syscall name the filter may refer to, on any supported architecture. */
export type SyscallName = keyof typeof X86_64 | keyof typeof AARCH64

/** Number of each syscall per architecture; `undefined` where the architecture lacks it. */
export const SYSCALL_NUMBERS: Readonly<Record<SeccompArchitecture, Readonly<Partial<Record<SyscallName, number>>>>> = {
  x86_64: X86_64,
  aarch64: AARCH64,
}

/** `seccomp_data.arch` of each architecture (AUDIT_ARCH_*: the ELF machine, 64-bit, little-endian). */
export const AUDIT_ARCH: Readonly<Record<SeccompArchitecture, number>> = {
  x86_64: 0xc000003e,
  aarch64: 0xc00000b7,
}
