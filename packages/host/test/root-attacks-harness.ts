import { execFileSync } from 'node:child_process'
import { children, commandLine } from 'dsh-testkit'
import { SYSCALL_NUMBERS, seccompArchitecture } from 'dsh-sandbox-local/internal'
import { HeadlessHost } from './headless-host'
import { CLI } from './helpers'
import type { PrivateRuntime } from './private-runtime'

/** The attacker's syscall numbers for this machine (x86_64 or aarch64). */
export const NUMBERS = SYSCALL_NUMBERS[seccompArchitecture()]

/**
 * A real `dsh-terminal headless` host (from sources, through tsx) driven as a model drives it: one
 * JSON line per tool call. It runs inside a private `/tmp/dsh-terminal`, so its attach socket meets
 * no other host on the machine, with the test's environment plus `env`. It adds what the attacks need.
 */
export class AttackedHost extends HeadlessHost {
  /** Start a host on `config` with `workspace` as its `--cwd`. */
  static launch(runtime: PrivateRuntime, config: string, workspace: string, env: Record<string, string> = {}): AttackedHost {
    return new AttackedHost(HeadlessHost.run(runtime, ['--config', config, '--cwd', workspace], { env }))
  }

  /** Open a shell session; resolves with its id, or the error text of a refused open. */
  async open(): Promise<{ sessionId?: string; text: string }> {
    const opened = await this.answer('terminal_open', { type: 'shell' })
    const sessionId = opened.isError ? undefined : /pty-\d+/.exec(opened.text)?.[0]
    return sessionId === undefined ? { text: opened.text } : { sessionId, text: opened.text }
  }

  /** Open a session or fail the test with the host's answer and log. */
  async session(): Promise<string> {
    const { sessionId, text } = await this.open()
    if (sessionId === undefined) throw new Error(`terminal_open failed: ${text}\n${this.running.stderr()}`)
    return sessionId
  }

  /** Type `script` into a session and wait for the prompt; resolves with what the session printed. */
  async send(sessionId: string, script: string): Promise<string> {
    return await this.call('terminal_send', { sessionId, text: script, timeoutMs: 60_000 })
  }

  /** Run `script` in a fresh session and close it; resolves with its output. */
  async shell(script: string): Promise<string> {
    const sessionId = await this.session()
    const output = await this.send(sessionId, script)
    await this.call('terminal_close', { sessionId })
    return output
  }

  /** The host's own node process (tsx runs the CLI in a child): what a crash would kill. */
  hostPid(): number | undefined {
    const pending = [this.running.child.pid!]
    while (pending.length > 0) {
      const pid = pending.shift()!
      const kids = children(pid)
      const host = kids.find(
        (kid) => (commandLine(kid) ?? []).includes(CLI) && children(kid).every((grandchild) => !(commandLine(grandchild) ?? []).includes(CLI)),
      )
      if (host !== undefined) return host
      pending.push(...kids)
    }
    return undefined
  }
}

/**
 * A perl one-liner printing `<label>=<result> <errno>` for one raw syscall; string arguments go in
 * `$a`, `$b`, `$c` (perl passes a variable's string as a pointer). Works inside and outside sandboxes.
 */
export function perlSyscall(label: string, call: string, strings: readonly string[] = []): string {
  const variables = strings.map((value, index) => `$${'abc'[index]} = "${value}"; `).join('')
  return `perl -e '${variables}$r = syscall(${call}); print "${label}=$r ", $! + 0, "\\n"'`
}

/** keyctl(2) operations and special keyring ids used by the keyring attack. */
export const KEYCTL = { UNLINK: 9, SEARCH: 10, READ: 11, INVALIDATE: 21, USER_KEYRING: -4 } as const

/** A perl line that reads key `id` and prints `read=<payload>` or `read=-1 <errno>`. */
export function perlReadKey(id: number): string {
  return `perl -e '$buf = "\\0" x 256; $r = syscall(${NUMBERS.keyctl}, ${KEYCTL.READ}, ${id}, $buf, 256); print "read=", ($r < 0 ? "-1 " . ($! + 0) : substr($buf, 0, $r)), "\\n"'`
}

/** Add a user key to uid 0's user keyring from this (unconfined) process, as the host's own process could; returns its id. */
export function addUserKey(description: string, payload: string): number {
  const script = `$a = "user"; $b = "${description}"; $c = "${payload}"; $r = syscall(${NUMBERS.add_key}, $a, $b, $c, length($c), ${KEYCTL.USER_KEYRING}); print $r`
  const id = Number(execFileSync('perl', ['-e', script], { encoding: 'utf8' }))
  if (!(id > 0)) throw new Error(`add_key failed on the host: ${id}`)
  return id
}

/** Remove a key this test added: unlinked from the user keyring and invalidated (errors ignored: it may be gone). */
export function removeUserKey(id: number): void {
  const script = `syscall(${NUMBERS.keyctl}, ${KEYCTL.UNLINK}, ${id}, ${KEYCTL.USER_KEYRING}); syscall(${NUMBERS.keyctl}, ${KEYCTL.INVALIDATE}, ${id})`
  execFileSync('perl', ['-e', script])
}
