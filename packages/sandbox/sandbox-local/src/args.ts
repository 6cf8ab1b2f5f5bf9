import type { SandboxPolicy } from 'dsh-sandbox'

/**
 * The bubblewrap options (everything before `--`) for a policy whose paths were already validated.
 * Mount order matters: later mounts cover earlier ones, so the workspace is bound after `/tmp`.
 */
export function bwrapOptions(policy: SandboxPolicy): string[] {
  const options = [
    // The sandbox ends with the process that spawned bwrap, so a crashed host leaves nothing behind.
    '--die-with-parent',
    // Own pid namespace: a daemonised descendant cannot outlive the sandbox's init, and `kill -1`
    // cannot reach host processes. The host still sees every member under bwrap's pid.
    '--unshare-pid',
    // The whole host filesystem, read-only and without device nodes.
    '--ro-bind', '/', '/',
    // A minimal /dev (null, zero, urandom, tty, a private devpts and /dev/shm); /dev/console is the
    // caller's terminal, so `tty` and job control keep working.
    '--dev', '/dev',
    '--proc', '/proc',
    // A private, empty /tmp that disappears with the sandbox.
    '--tmpfs', '/tmp',
  ]
  // No network at all in read-only: only a loopback interface exists.
  if (policy.mode === 'read-only') options.push('--unshare-net')
  // Bound after /tmp so a workspace under /tmp stays visible; read-write only in workspace-write.
  const bind = policy.mode === 'workspace-write' ? '--bind' : '--ro-bind'
  options.push(bind, policy.workspaceRoot, policy.workspaceRoot)
  if (policy.cwd !== undefined) options.push('--chdir', policy.cwd)
  return options
}

/** The full confined argv: bwrap, its options, `--`, then the original command untouched. */
export function bwrapArgv(bwrapPath: string, argv: readonly string[], policy: SandboxPolicy): string[] {
  return [bwrapPath, ...bwrapOptions(policy), '--', ...argv]
}
