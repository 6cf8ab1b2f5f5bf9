import type { TerminalScreen, TerminalSize } from './screen'
import type { TerminalInputState } from './input-state'
import type {
  TerminalBackendSpawnSpec,
  TerminalReadRequest,
  TerminalReadResult,
  TerminalSendOperation,
  TerminalSendRequest,
  TerminalSessionId,
  TerminalSessionStatus,
  TerminalSignal,
  TerminalSignalResult,
} from './types'

/**
 * A replaceable provider of one session type. The service owns ids, owners and cleanup;
 * the backend owns processes, readiness and output.
 */
export interface TerminalBackend {
  /** Stable, non-empty type selected by `TerminalSpawnRequest.type`. */
  readonly type: string
  /**
   * Start an unpublished session. On failure or abort, clean partial resources before rejecting;
   * if that cleanup itself failed, reject with `TerminalBackendCleanupError`.
   */
  spawn(spec: TerminalBackendSpawnSpec): Promise<TerminalBackendSession>
  /**
   * Sessions of this type kept detached outside this process (a host process that is gone detached
   * them), for the registry to list and resume. Optional: only a backend whose provider keeps
   * terminals beyond its client (dsh-subprocess-remote) has it.
   */
  listDetached?(): Promise<readonly TerminalDetachedSession[]>
  /**
   * The machines (subprocess targets) its last {@link TerminalBackend.listDetached} could not ask, with
   * why: their detached sessions are missing from that list. Optional, as `listDetached` is.
   */
  unreachableTargets?(): readonly TerminalUnreachableTarget[]
  /**
   * Adopt the session `spec.sessionId` that {@link TerminalBackend.listDetached} reported and rebuild
   * it: its next send's earlier output is what it printed after its last delivered result. Rejects
   * with `SESSION_ADOPTED` when another process adopted it first, `NO_SESSION` when it is gone.
   */
  resume?(spec: TerminalBackendSpawnSpec): Promise<TerminalBackendSession>
}

/** A subprocess target a listing of detached sessions could not ask, as {@link TerminalBackend.unreachableTargets} reports it. */
export interface TerminalUnreachableTarget {
  /** The target's name (as `terminal_open` takes it). */
  readonly target: string
  /** Why it did not answer. */
  readonly reason: string
}

/** A session detached by another host process, as {@link TerminalBackend.listDetached} reports it. */
export interface TerminalDetachedSession {
  /** The id it had (and keeps). */
  readonly sessionId: TerminalSessionId
  /** Its display name, when it had one. */
  readonly name?: string
  /** Its top-level process. */
  readonly pid?: number
  /** When its last client went (epoch ms). */
  readonly detachedAt: number
  /** Its top-level status now. */
  readonly status: TerminalSessionStatus
  /** The subprocess target it runs on, when not this machine; a resume adopts it there. */
  readonly target?: string
  /** What it waited for when its last send settled (its detaching host's last knowledge). */
  readonly input?: TerminalInputState
}

/** A backend-owned live session, retained by the service until it is closed. */
export interface TerminalBackendSession {
  /** Startup output returned to the opener. */
  readonly motd: string
  /** Top-level process id, when one exists. */
  readonly pid?: number
  /** Window size now, when the session has a terminal (it changes when a send resizes it). */
  readonly size?: TerminalSize
  /** The terminal type its programs were told (`TERM`), when it has a terminal; recordings name it. */
  readonly term?: string
  /** The subprocess target it runs on, when it was opened on a named one. */
  readonly target?: string
  /** Start one send; the service guarantees no other send of this session is active. */
  startSend(request: TerminalSendRequest): TerminalSendOperation
  /** Read one bounded page of retained scrollback, numbered absolutely; the request was validated by the registry. */
  read(request: TerminalReadRequest): TerminalReadResult
  /** Deliver a signal to the verified foreground process group. */
  signal(signal: TerminalSignal): Promise<TerminalSignalResult>
  /** Observe the top-level process status. */
  status(): TerminalSessionStatus
  /**
   * What the terminal waits for now (or what runs in front), inspected afresh; `undefined` when it
   * cannot be told (exited, closing). Optional: a backend without it reports nothing.
   */
  inputState?(): Promise<TerminalInputState | undefined>
  /** What the terminal shows now, every byte that arrived before the call rendered. Optional: a backend without an emulator has none. */
  screen?(): Promise<TerminalScreen>
  /**
   * Let a person watch: the screen so far, then every later byte of raw output, with nothing lost or
   * repeated between them. Optional: a session without it cannot be watched.
   */
  tap?(onOutput: (bytes: Uint8Array) => void, onEnd: (reason: string) => void): TerminalBackendTap
  /** Write what a person typed, as it is (no readiness, no result); the next send reads the output. Optional with {@link TerminalBackendSession.tap}. */
  writeAsHuman?(data: string): Promise<void>
  /**
   * Stop waiting for the active send, without signalling it: its caller is gone (the session was
   * detached). What it collected, and what follows, is the next result's earlier output. Optional:
   * without it the send runs to its end and its result is lost.
   */
  release?(): void
  /**
   * Let go of the session without ending it, when its terminal outlives this process (a durable
   * terminal of a session host, which keeps it detached for another host to adopt): stop reading
   * and answer true. False when it cannot (the caller then closes it). Optional: without it, closed.
   */
  leave?(): boolean
  /**
   * True once the session's processes died with the provider that held them (its session host was
   * killed), not by an exit of their own: the registry then drops the session with `SESSION_HOST_LOST`.
   * Optional: an in-process session cannot outlive its provider.
   */
  lost?(): boolean
  /** Idempotently close the whole process tree and await quiescence; a rejection may be retried. */
  close(reason: string): Promise<void>
}

/** A person's tap on a session's output (see {@link TerminalBackendSession.tap}). */
export interface TerminalBackendTap {
  /** The screen when the tap opened, as output that redraws it on a cleared terminal of the session's size. */
  readonly screen: Promise<string>
  /** Stop delivering output; `onEnd` is not called. Idempotent. */
  close(): void
}
