import { existsSync } from 'node:fs'

/**
 * How a kernel interface is kept from the sandbox: `read-only` binds it read-only over itself,
 * `hidden` puts /dev/null over a file, `emptied` puts an empty read-only tmpfs over a directory.
 */
export type KernelMaskTreatment = 'read-only' | 'hidden' | 'emptied'

/** One kernel interface under /proc or /sys that uid 0 could use against the host, and why. */
export interface KernelMask {
  readonly path: string
  readonly treatment: KernelMaskTreatment
  readonly why: string
}

/**
 * The kernel interfaces masked in every sandbox, after its fresh /proc (the same set Docker masks
 * in a root container). The sandbox's uid 0 can be the host's root, and these check the uid, not
 * a capability, so dropping capabilities alone leaves them open.
 */
export const KERNEL_MASKS: readonly KernelMask[] = [
  { path: '/proc/sys', treatment: 'read-only', why: 'sysctls check the uid: kernel.core_pattern alone would run any program as host root' },
  { path: '/proc/sysrq-trigger', treatment: 'read-only', why: 'magic SysRq: reboots, crashes or kills everything on the host' },
  { path: '/proc/irq', treatment: 'read-only', why: "interrupt routing of the host's devices" },
  { path: '/proc/bus', treatment: 'read-only', why: 'PCI and USB device configuration space' },
  { path: '/proc/fs', treatment: 'read-only', why: 'filesystem tunables of the host (nfsd, xfs, ext4)' },
  { path: '/proc/kcore', treatment: 'hidden', why: "the host's memory as a core file" },
  { path: '/proc/keys', treatment: 'hidden', why: "lists the keys of the host's keyrings that uid 0 may view" },
  { path: '/proc/timer_list', treatment: 'hidden', why: 'host-wide timers with task names and kernel addresses' },
  { path: '/proc/sched_debug', treatment: 'hidden', why: 'every task of the host with scheduler details' },
  { path: '/proc/latency_stats', treatment: 'hidden', why: 'kernel stack traces of the whole host' },
  { path: '/proc/timer_stats', treatment: 'hidden', why: 'host-wide timer usage by task (old kernels)' },
  { path: '/proc/acpi', treatment: 'emptied', why: 'ACPI power and device controls of old kernels' },
  { path: '/proc/asound', treatment: 'emptied', why: "the host's sound devices" },
  { path: '/proc/scsi', treatment: 'emptied', why: 'adds and removes SCSI devices' },
  { path: '/sys/firmware', treatment: 'emptied', why: 'ACPI tables, DMI data and EFI variables (writable EFI variables can brick a machine)' },
  { path: '/sys/devices/virtual/powercap', treatment: 'emptied', why: 'RAPL energy counters leak what the host computes (the Platypus attack)' },
]

/**
 * The bwrap options for {@link KERNEL_MASKS}, to follow `--proc /proc`. A read-only bind is skipped
 * by bwrap when the kernel has no such file; a file or directory that gets something mounted over
 * it must exist (bwrap cannot create one in /proc or /sys), so those are asked of the host first.
 */
export function kernelMaskOptions(present: (path: string) => boolean = presentOnHost): string[] {
  return KERNEL_MASKS.flatMap(({ path, treatment }) => {
    if (treatment === 'read-only') return ['--ro-bind-try', path, path]
    if (!present(path)) return []
    return treatment === 'hidden' ? ['--ro-bind', '/dev/null', path] : ['--tmpfs', path, '--remount-ro', path]
  })
}

const presence = new Map<string, boolean>()

/** Whether the host's kernel has `path`; what /proc and /sys offer does not change while it runs. */
function presentOnHost(path: string): boolean {
  let present = presence.get(path)
  if (present === undefined) {
    present = existsSync(path)
    presence.set(path, present)
  }
  return present
}
