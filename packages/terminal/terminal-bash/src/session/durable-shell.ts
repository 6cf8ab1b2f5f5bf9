import type { DurableTerminalSpec, SubprocessRuntime } from 'dsh-subprocess'
import { isSubprocessError, LOCAL_TARGET } from 'dsh-subprocess'
import { asTerminalSessionId, type TerminalBackendSpawnSpec, type TerminalDetachedSession, TerminalError, type TerminalUnreachableTarget } from 'dsh-terminal'
import type { ShellBackendConfig } from '../config'
import { factsSize, parseFacts } from './durable-facts'
import type { ShellSession } from './shell-session'
import { LinkedShellSession } from './linked-session'

/** What the durable side of the shell backend needs. */
interface DurableOptions {
  readonly subprocess: Pick<SubprocessRuntime, 'listDetached' | 'adoptTerminal' | 'unreachableTargets'>
  readonly config: ShellBackendConfig
  /** Fence the owner's sandbox mode, as a spawn does: the adopted session is the owner's activity now. */
  readonly fence: (owner: TerminalBackendSpawnSpec['owner']) => void
}

/**
 * The `durable` part of a spawn: the registry keeps sessions detached (`detachedTtlMs`) and the
 * provider can keep a terminal beyond this process (it has `adoptTerminal`). The key is the session
 * id; the provider retains as much output as the scrollback, for the adopter's replay.
 */
export function durableSpec(
  subprocess: Pick<SubprocessRuntime, 'adoptTerminal'>,
  spec: Pick<TerminalBackendSpawnSpec, 'sessionId' | 'detachedTtlMs'>,
  config: Pick<ShellBackendConfig, 'scrollbackMaxBytes'>,
): { durable?: DurableTerminalSpec } {
  if (!spec.detachedTtlMs || typeof subprocess.adoptTerminal !== 'function') return {}
  return { durable: { key: spec.sessionId, ttlMs: spec.detachedTtlMs, retainBytes: config.scrollbackMaxBytes } }
}

/**
 * Listing and adoption of shells other host processes left detached, when the provider offers
 * both; otherwise undefined (dsh-subprocess-local: durability stays in process).
 */
export function durableShell(options: DurableOptions) {
  const { subprocess, config } = options
  const list = subprocess.listDetached
  const adopt = subprocess.adoptTerminal
  if (typeof list !== 'function' || typeof adopt !== 'function') return undefined
  return {
    async list(): Promise<TerminalDetachedSession[]> {
      const detached = await list.call(subprocess)
      return detached.flatMap((terminal) => {
        const facts = parseFacts(terminal.facts)
        // Not a shell this backend can rebuild (no facts yet, another version): not offered.
        if (!facts) return []
        const status = terminal.exit
          ? { kind: 'exited' as const, exitCode: terminal.exit.exitCode, signal: terminal.exit.signal }
          : { kind: 'running' as const }
        const session: TerminalDetachedSession = {
          sessionId: asTerminalSessionId(terminal.key),
          pid: terminal.pid,
          detachedAt: terminal.detachedAt,
          status,
          ...(facts.name === undefined ? {} : { name: facts.name }),
          ...(facts.input === undefined ? {} : { input: facts.input }),
          // This machine's own sessions say nothing; one on a named target says where it runs.
          ...(terminal.target === undefined || terminal.target === LOCAL_TARGET ? {} : { target: terminal.target }),
        }
        return [session]
      })
    },

    /** The targets the provider's last listing could not ask (none when it has no targets). */
    unreachable(): TerminalUnreachableTarget[] {
      return [...(subprocess.unreachableTargets?.() ?? [])]
    },

    /** Adopt the terminal keyed by the session id and rebuild the shell from its replay and facts. */
    async resume(spec: TerminalBackendSpawnSpec): Promise<ShellSession> {
      options.fence(spec.owner)
      let adopted
      try {
        adopted = await adopt.call(subprocess, spec.sessionId, spec.target)
      } catch (error) {
        throw adoptionFailure(error, spec.sessionId)
      }
      const facts = parseFacts(adopted.facts)
      if (!facts) {
        await adopted.handle.terminate()
        throw new TerminalError('NO_SESSION', `detached PTY session ${spec.sessionId} kept no facts this version can resume from; it was closed`)
      }
      const session = new LinkedShellSession(adopted.handle, config, { nonce: facts.nonce, replNonce: facts.replNonce }, factsSize(facts), {
        observe: spec.onOutput,
        term: facts.term,
        outputFrom: adopted.replayFrom,
        name: facts.name,
        target: spec.target,
      })
      session.adopt(facts)
      return session
    },
  }
}

/** The provider's adoption refusals as the registry's codes. */
function adoptionFailure(error: unknown, sessionId: string): unknown {
  if (!isSubprocessError(error)) return error
  if (error.code === 'TERMINAL_ADOPTED') {
    return new TerminalError('SESSION_ADOPTED', `PTY session ${sessionId} was resumed by another host first; open a new session instead (terminal_open)`)
  }
  if (error.code === 'TERMINAL_NOT_FOUND') {
    return new TerminalError('NO_SESSION', `no detached PTY session ${sessionId}; terminal_list shows the sessions you can resume (marked detached)`)
  }
  return error
}
