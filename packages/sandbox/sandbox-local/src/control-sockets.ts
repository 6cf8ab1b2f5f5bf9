import { lstatSync } from 'node:fs'

/**
 * Host sockets whose server grants root-equivalent control to any client it trusts by uid: container
 * engines, the system bus, systemd's private socket. A read-only mount does not stop connect(2) on a
 * socket file, and a sandbox run by root connects as uid 0, so these are hidden behind `/dev/null`.
 */
export const CONTROL_SOCKETS: readonly string[] = [
  '/run/docker.sock',
  '/var/run/docker.sock',
  '/run/containerd/containerd.sock',
  '/run/podman/podman.sock',
  '/run/crio/crio.sock',
  '/run/dbus/system_bus_socket',
  '/var/run/dbus/system_bus_socket',
  '/run/systemd/private',
  '/run/systemd/notify',
  '/run/snapd.socket',
  '/run/libvirt/libvirt-sock',
  '/run/lxd/unix.socket',
  '/var/snap/lxd/common/lxd/unix.socket',
]

/** The entries of `candidates` that exist as sockets right now (symlinks are not followed); one lstat each. */
export async function presentSockets(candidates: readonly string[]): Promise<string[]> {
  return presentSocketsNow(candidates)
}

/** {@link presentSockets}, synchronously (the check of a sandbox started ahead is synchronous). */
export function presentSocketsNow(candidates: readonly string[]): string[] {
  return candidates.filter((path) => lstatSync(path, { throwIfNoEntry: false })?.isSocket() === true)
}
