/**
 * True when process `pid` exists, zombies included (signal 0 checks without signalling; EPERM means
 * it exists under another uid). The one liveness check of lock files, stale sockets and registries.
 */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH'
  }
}
