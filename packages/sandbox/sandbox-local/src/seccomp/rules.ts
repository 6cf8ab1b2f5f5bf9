import type { SyscallName } from './syscalls'

/** errno values the filter returns (the same on x86_64 and aarch64). */
export const ERRNO = { EPERM: 1, ENOSYS: 38 } as const

/** Namespace flags of clone(2) and unshare(2): CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET. */
export const CLONE_NAMESPACE_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
/** CLONE_NEWTIME: unshare(2) only; in clone(2)'s flags the same bit is part of the exit signal. */
const CLONE_NEWTIME = 0x00000080
/** The terminal ioctls that act on the terminal itself, not the caller: TIOCSTI (inject input), TIOCLINUX (console selection). */
export const REFUSED_IOCTLS = { TIOCSTI: 0x5412, TIOCLINUX: 0x541c } as const
/** personality(2) values Docker's default profile allows: PER_LINUX, PER_LINUX32, UNAME26, both of those, and the query (0xffffffff). */
export const HARMLESS_PERSONALITIES = [0x0, 0x8, 0x20000, 0x20008, 0xffffffff] as const
/** AF_VSOCK: sockets to the hypervisor and other virtual machines. */
const AF_VSOCK = 40

/**
 * When a rule refuses its syscall: always, or by one argument's low 32 bits (every argument these
 * rules read is an int or unsigned int in the kernel, so the high half is ignored there too).
 */
export type Condition =
  | { readonly kind: 'always' }
  | { readonly kind: 'any-bit'; readonly argument: number; readonly mask: number }
  | { readonly kind: 'one-of'; readonly argument: number; readonly values: readonly number[] }
  | { readonly kind: 'none-of'; readonly argument: number; readonly values: readonly number[] }

/** One line of the filter: the syscall, when it is refused, with which errno, and why. */
export interface SeccompRule {
  readonly syscall: SyscallName
  readonly refuseWhen: Condition
  readonly errno: number
  readonly why: string
}

const always: Condition = { kind: 'always' }

function refuse(syscall: SyscallName, why: string, refuseWhen: Condition = always, errno: number = ERRNO.EPERM): SeccompRule {
  return { syscall, refuseWhen, errno, why }
}

/**
 * Everything the sandbox refuses; every other syscall is allowed. The sandbox's uid 0 may be the
 * host's root, and many kernel interfaces check the uid rather than a capability, so the filter
 * closes the ones that reach the host kernel's global state. ptrace stays allowed on purpose.
 */
export const SECCOMP_RULES: readonly SeccompRule[] = [
  refuse('keyctl', "the kernel keyrings are per uid: uid 0 inside would read and change the host root's keys"),
  refuse('add_key', 'adds keys to keyrings the host shares with the sandbox (see keyctl)'),
  refuse('request_key', 'can upcall /sbin/request-key as host root and reads the host keyrings (see keyctl)'),
  refuse('bpf', 'eBPF programs and maps: a large kernel attack surface, and tracing of the host when allowed'),
  refuse('perf_event_open', 'performance counters observe the host and are a frequent kernel attack surface'),
  refuse('kexec_load', 'replaces the running kernel'),
  refuse('kexec_file_load', 'replaces the running kernel'),
  refuse('init_module', 'loads code into the host kernel'),
  refuse('finit_module', 'loads code into the host kernel'),
  refuse('delete_module', 'unloads host kernel modules'),
  refuse('mount', 'the mount table is the sandbox: nothing inside may change it'),
  refuse('umount2', 'unmounting would uncover what the sandbox hides (e.g. the host /tmp)'),
  refuse('pivot_root', 'changes the root of the mount namespace'),
  refuse('move_mount', 'new mount API: same reason as mount'),
  refuse('open_tree', 'new mount API: clones mounts, same reason as mount'),
  refuse('fsopen', 'new mount API: same reason as mount'),
  refuse('fsmount', 'new mount API: same reason as mount'),
  refuse('fsconfig', 'new mount API: same reason as mount'),
  refuse('fspick', 'new mount API: reconfigures existing mounts, e.g. read-only to read-write'),
  refuse('mount_setattr', 'new mount API: changes mount flags such as read-only'),
  refuse('userfaultfd', 'stalls the kernel at chosen page faults, the usual tool to win kernel races'),
  refuse('unshare', 'new namespaces: a user namespace gives capabilities in it and exposes much more of the kernel', {
    kind: 'any-bit',
    argument: 0,
    mask: CLONE_NAMESPACE_FLAGS | CLONE_NEWTIME,
  }),
  refuse('clone', 'new namespaces through clone(2) (flags are args[0] on x86_64 and aarch64)', {
    kind: 'any-bit',
    argument: 0,
    mask: CLONE_NAMESPACE_FLAGS,
  }),
  refuse('clone3', 'its flags sit in memory a filter cannot read: ENOSYS makes libc fall back to clone(2), which is checked', always, ERRNO.ENOSYS),
  refuse('setns', "joins other namespaces, e.g. a host process's through a /proc file descriptor"),
  refuse('personality', 'other personalities change the syscall ABI and memory layout (READ_IMPLIES_EXEC, old ABIs)', {
    kind: 'none-of',
    argument: 0,
    values: HARMLESS_PERSONALITIES,
  }),
  refuse('ioctl', 'TIOCSTI pushes input into the terminal and TIOCLINUX into the console, also where legacy_tiocsti cannot stop it', {
    kind: 'one-of',
    argument: 1,
    values: [REFUSED_IOCTLS.TIOCSTI, REFUSED_IOCTLS.TIOCLINUX],
  }),
  refuse('socket', 'vsock reaches the hypervisor and other guests, outside any network namespace', { kind: 'one-of', argument: 0, values: [AF_VSOCK] }),
  refuse('acct', "process accounting writes host-wide records to a file of the caller's choice"),
  refuse('swapon', 'changes host swap'),
  refuse('swapoff', 'changes host swap'),
  refuse('reboot', 'reboots or halts the host'),
  refuse('settimeofday', 'sets the host clock'),
  refuse('clock_settime', 'sets the host clock'),
  refuse('adjtimex', 'adjusts the host clock'),
  refuse('clock_adjtime', 'adjusts the host clock'),
  refuse('quotactl', 'changes filesystem quotas of the host'),
  refuse('quotactl_fd', 'changes filesystem quotas of the host'),
  refuse('lookup_dcookie', 'kernel profiling interface that resolves paths of the host'),
  refuse('nfsservctl', 'controls the host NFS server (gone from current kernels)'),
  refuse('open_by_handle_at', 'opens files by handle, bypassing the paths the sandbox hides (the "shocker" escape)'),
  refuse('name_to_handle_at', 'produces the handles open_by_handle_at would use'),
  refuse('iopl', 'raw access to I/O ports'),
  refuse('ioperm', 'raw access to I/O ports'),
  refuse('vhangup', 'hangs up the terminal for every process that uses it'),
  refuse('syslog', "reads and clears the host's kernel log"),
  refuse('uselib', 'obsolete library loader with a history of kernel bugs'),
  refuse('_sysctl', 'old binary sysctl interface: would write kernel settings past the read-only /proc/sys'),
  refuse('fanotify_init', 'watches file access across the filesystem'),
  // ENOSYS, as on a kernel without io_uring: libuv, glibc and liburing then fall back to plain syscalls.
  refuse('io_uring_setup', 'a large, often-exploited kernel surface whose operations this filter cannot see (Docker refuses it too)', always, ERRNO.ENOSYS),
  refuse('io_uring_enter', 'see io_uring_setup', always, ERRNO.ENOSYS),
  refuse('io_uring_register', 'see io_uring_setup', always, ERRNO.ENOSYS),
]
