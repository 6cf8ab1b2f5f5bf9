import { sessionHostCommand } from 'dsh-session-host'
import * as remotePlugin from 'dsh-subprocess-remote'
import { installed, type SshHost } from 'dsh-testkit'
import { PATIENT, startStack, type Stack } from './stack'

/**
 * Whether the ssh-target tests can run here: root (a network namespace), `ip`, `ssh` and Debian's
 * sshd. With `CI=true` a missing program throws (installed() says which); not being root skips.
 */
export const sshTargetRuns = process.getuid?.() === 0 && ['ip', 'ssh', 'ssh-keygen', 'sshd'].every((program) => installed(program))

/** The `connect` argv of an ssh target: `dsh-session-host --stdio` on `host`, run by absolute path with this Node. */
export function sshConnect(host: SshHost): string[] {
  return host.connect([...sessionHostCommand(), '--stdio'])
}

/**
 * The real stack (the default shell backend) on dsh-subprocess-remote with `host` as its target.
 * `livenessMs` is passed for the client's liveness check (ignored by a client that has none).
 */
export function sshStack(host: SshHost, extra: Record<string, unknown> = {}): Promise<Stack> {
  return startStack(PATIENT, { provider: { plugin: remotePlugin, config: { connect: sshConnect(host), startTimeoutMs: 20_000, ...extra } } })
}
