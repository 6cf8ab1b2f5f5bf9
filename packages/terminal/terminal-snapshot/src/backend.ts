import type {
  TerminalBackend,
  TerminalBackendSession,
  TerminalBackendSpawnSpec,
  TerminalReadRequest,
  TerminalReadResult,
  TerminalSendOperation,
  TerminalSendRequest,
  TerminalSendResult,
  TerminalSessionStatus,
  TerminalSignal,
  TerminalSignalResult,
} from 'dsh-terminal'

/** Process group every snapshot signal reports, so a rendered result never depends on the host. */
export const SNAPSHOT_PGID = 4242

/** Lines `seq` may print at most: enough to overflow any small cap, never a flood. */
const MAX_SEQ = 1000

/**
 * A deterministic in-memory terminal, for snapshot tests of hosts and tools: no process, no timer,
 * the same bytes on every machine. Commands (one per send):
 * - `seq <n>` prints the numbers 1..n, one per line;
 * - `sleep` stays running until it is cancelled or signalled (then prints `^C`);
 * - `exit [code]` ends the session;
 * - anything else prints `ok: <text>`.
 * Every send first echoes its text, as a terminal does.
 */
export class SnapshotSession implements TerminalBackendSession {
  readonly motd: string
  private readonly lines: string[] = []
  private state: TerminalSessionStatus = { kind: 'running' }
  private pending: PendingSend | undefined

  constructor(readonly sessionId: string) {
    this.motd = `snapshot terminal ${sessionId} ready`
  }

  startSend(request: TerminalSendRequest): TerminalSendOperation {
    if (this.state.kind !== 'running') {
      return settledOperation({ viewport: '', waitReason: 'session_exit', sessionStatus: { ...this.state }, truncated: false })
    }
    const send = new PendingSend(this)
    // This backend only types text: keys, a resize or a wait print nothing and wait.
    const text = request.text ?? ''
    send.print(text)
    if (request.submit) this.run(text.trim(), send)
    else send.settle('stdin_read')
    request.signal?.addEventListener('abort', () => send.interrupt(), { once: true })
    return send.operation()
  }

  read(request: TerminalReadRequest): TerminalReadResult {
    const total = this.lines.length
    const count = request.count ?? total
    const end = request.fromLine === undefined ? Math.max(0, total - (request.offset ?? 0)) : Math.min(total, request.fromLine - 1 + count)
    const begin = request.fromLine === undefined ? Math.max(0, end - count) : Math.min(end, request.fromLine - 1)
    const empty = end <= begin
    return {
      text: this.lines.slice(begin, end).join('\n'),
      totalLines: total,
      lineBegin: empty ? 0 : begin + 1,
      lineEnd: empty ? 0 : end,
      oldestLine: 1,
      truncated: false,
    }
  }

  async signal(signal: TerminalSignal): Promise<TerminalSignalResult> {
    if (signal !== 'SIGTSTP') this.pending?.interrupt()
    return { delivered: true, targetPgid: SNAPSHOT_PGID }
  }

  status(): TerminalSessionStatus {
    return { ...this.state }
  }

  async close(_reason: string): Promise<void> {
    if (this.state.kind === 'running') this.state = { kind: 'exited', exitCode: null, signal: 'SIGHUP' }
    this.pending?.settle('session_exit')
  }

  /** Append output lines to the scrollback (used by sends). */
  record(text: string): void {
    this.lines.push(...text.split('\n'))
  }

  /** The send that is still waiting (a `sleep`), if any. */
  hold(send: PendingSend | undefined): void {
    this.pending = send
  }

  private run(command: string, send: PendingSend): void {
    const seq = /^seq (\d+)$/.exec(command)
    const exit = /^exit(?: (\d+))?$/.exec(command)
    if (seq) {
      const count = Math.min(Number(seq[1]), MAX_SEQ)
      send.print(Array.from({ length: count }, (_, index) => String(index + 1)).join('\n'))
      send.settle('stdin_read', 0)
    } else if (exit) {
      this.state = { kind: 'exited', exitCode: Number(exit[1] ?? 0), signal: null }
      send.settle('session_exit')
    } else if (command === 'sleep') {
      this.hold(send)
    } else {
      send.print(`ok: ${command}`)
      send.settle('stdin_read', 0)
    }
  }
}

/** One send of a {@link SnapshotSession}: output not yet consumed, and the result once settled. */
class PendingSend {
  private unread: string[] = []
  private result: TerminalSendResult | undefined
  private readonly waiters: ((result: TerminalSendResult) => void)[] = []

  constructor(private readonly session: SnapshotSession) {}

  print(text: string): void {
    this.unread.push(text)
    this.session.record(text)
  }

  settle(waitReason: TerminalSendResult['waitReason'], exitCode?: number): void {
    if (this.result) return
    this.session.hold(undefined)
    const result: TerminalSendResult = { viewport: this.unread.join('\n'), waitReason, sessionStatus: this.session.status(), truncated: false }
    if (exitCode !== undefined) result.exitCode = exitCode
    // The output stays readable: a background job pulls it through readOutput after settlement.
    this.result = result
    for (const resolve of this.waiters.splice(0)) resolve(result)
  }

  interrupt(): boolean {
    if (this.result) return false
    this.print('^C')
    this.settle('stdin_read', 130)
    return true
  }

  operation(): TerminalSendOperation {
    const done = this.result ? Promise.resolve(this.result) : new Promise<TerminalSendResult>((resolve) => this.waiters.push(resolve))
    return {
      done,
      readOutput: () => {
        const delta = this.unread.join('\n')
        this.unread = []
        return { delta, truncated: false }
      },
      cancel: () => this.interrupt(),
    }
  }
}

function settledOperation(result: TerminalSendResult): TerminalSendOperation {
  return { done: Promise.resolve(result), readOutput: () => ({ delta: '', truncated: false }), cancel: () => false }
}

/** Backend type under which the snapshot terminal registers. */
export const SNAPSHOT_TYPE = 'snapshot'

/** The backend: every spawn is a fresh {@link SnapshotSession}; an aborted spawn rejects with its reason. */
export const snapshotBackend: TerminalBackend = {
  type: SNAPSHOT_TYPE,
  async spawn(spec: TerminalBackendSpawnSpec): Promise<TerminalBackendSession> {
    if (spec.signal.aborted) throw spec.signal.reason
    return new SnapshotSession(spec.sessionId)
  },
}
