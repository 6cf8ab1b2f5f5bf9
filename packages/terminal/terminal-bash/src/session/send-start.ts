import type { SubprocessTerminalHandle } from 'dsh-subprocess'
import type { TerminalSendRequest, TerminalSize } from 'dsh-terminal'
import type { ShellBackendConfig } from '../config'
import type { SendSession, SendTiming } from '../readiness/send-contract'
import type { ShellGroupPin } from './shell-group-pin'
import type { TerminalStream } from './terminal-stream'

/** What the backend knows of a shell it starts a session for, besides the handle. */
export interface LaunchedShell {
  /** Receives every raw chunk, in order (the registry's `spec.onOutput`). */
  observe?: ((bytes: Uint8Array) => void) | undefined
  /** The `TERM` the shell got. */
  term?: string | undefined
  /** Absolute offset of the first byte the handle delivers (an adopted terminal's `replayFrom`). */
  outputFrom?: number | undefined
  name?: string | undefined
  target?: string | undefined
}

/** The session's timing rules, from the validated config. */
export function timingOf(config: ShellBackendConfig): SendTiming {
  const { timeoutMs, idleSilenceMs, handoffGraceMs, pollIntervalMs, cancelGraceMs } = config
  return { timeoutMs, idleSilenceMs, handoffGraceMs, pollIntervalMs, cancelGraceMs }
}

/** One send's timing: the session's, with the request's own `timeoutMs` and `idleMs` (as the silence) when given. */
export function timingFor(base: SendTiming, request: Pick<TerminalSendRequest, 'timeoutMs' | 'idleMs'>): SendTiming {
  if (request.timeoutMs === undefined && request.idleMs === undefined) return base
  return {
    ...base,
    ...(request.timeoutMs === undefined ? {} : { timeoutMs: request.timeoutMs }),
    ...(request.idleMs === undefined ? {} : { idleSilenceMs: request.idleMs }),
  }
}

/**
 * The session as one send sees it, when that send's write resizes the PTY and the screen model first, right
 * after the pre-write inspection, so the foreground group's SIGWINCH comes after that baseline.
 * A resize-only send (empty bytes) writes no byte.
 */
export function resizingSession(
  session: SendSession,
  size: TerminalSize,
  parts: { handle: SubprocessTerminalHandle; stream: TerminalStream; pin: ShellGroupPin },
): SendSession {
  const { handle, stream, pin } = parts
  return {
    ...session,
    write: (data) =>
      pin.after(() => {
        handle.resize(size.rows, size.cols)
        stream.resize(size)
        return data === '' ? Promise.resolve() : handle.write(data)
      }),
  }
}
