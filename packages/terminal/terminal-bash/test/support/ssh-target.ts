import { randomBytes } from 'node:crypto'
import { rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { hostRuntimeDir } from 'dsh-sandbox'
import { sessionHostCommand } from 'dsh-session-host'
import * as remotePlugin from 'dsh-subprocess-remote'
import { installed, type SshHost } from 'dsh-testkit'
import { PATIENT, type Stack, startStack } from './stack'

/**
 * Whether the ssh-target tests can run here: root (a network namespace), `ip`, `ssh` and Debian's
 * sshd. With `CI=true` a missing program throws (installed() says which); not being root skips.
 */
export const sshTargetRuns = process.getuid?.() === 0 && ['ip', 'ssh', 'ssh-keygen', 'sshd'].every((program) => installed(program))

/** An ssh target for one test file: its `connect` argv, and the removal of what it left on disk. */
export interface SshTarget {
  /** `ssh … dsh-session-host --stdio --socket <this file's own>`, run by absolute path with this Node. */
  readonly connect: string[]
  /** Remove the socket directory (after the stack and the host are gone). */
  readonly remove: () => void
}

/**
 * The ssh target on `host`. `--socket` names a socket of the test's own: the target shares this
 * machine's filesystem, and a `--stdio` that relays to the user's socket session host (protocol
 * version 2) must not reach one that another test, or this machine, started.
 */
export function sshTarget(host: SshHost): SshTarget {
  const socket = join(hostRuntimeDir(process.getuid?.() ?? -1), `test-ssh-${randomBytes(6).toString('hex')}`, 'session-host.sock')
  return {
    connect: host.connect([...sessionHostCommand(), '--stdio', '--socket', socket]),
    remove: () => rmSync(dirname(socket), { recursive: true, force: true }),
  }
}

/**
 * The real stack (the default shell backend) on dsh-subprocess-remote with `target` as its connect
 * command, plus `extra` config (e.g. `livenessMs`).
 */
export function sshStack(target: SshTarget, extra: Record<string, unknown> = {}): Promise<Stack> {
  return startStack(PATIENT, { provider: { plugin: remotePlugin, config: { connect: target.connect, startTimeoutMs: 20_000, ...extra } } })
}
