import type { ForegroundFacts } from 'dsh-subprocess'

/** A pid plus its start identity: a recycled pid never matches an identity taken earlier. */
export interface ProcessIdentity {
  /** Process id. */
  readonly pid: number
  /** Opaque start identity (Linux: `starttime` ticks; macOS: `lstart`). */
  readonly started: string
}

/** One process as a platform inspector read it. */
export interface ProcessRecord extends ProcessIdentity {
  /** Parent pid. */
  readonly ppid: number
  /** Process group id. */
  readonly pgid: number
  /** Session id, when the platform reports it. */
  readonly sid: number | undefined
  /** Foreground group of its controlling terminal; 0 or less when it has none. */
  readonly tpgid: number
  /** Controlling terminal device number (0: none), when the platform reports it. */
  readonly ttyNr: number | undefined
  /** Exited but not reaped: it runs nothing and counts as gone. */
  readonly zombie: boolean
  /** Stopped by job control or a tracer: it acts on SIGTERM only after SIGCONT. */
  readonly stopped: boolean
  /** Number of threads (1 when unknown). */
  readonly threads: number
  /** The kernel's command name (Linux `comm`, macOS `ucomm`), when the platform reported it. */
  readonly command?: string | undefined
  /** SIGTERM/SIGHUP disposition read with the record (Linux `stat`), so teardown needs no second read. */
  readonly disposition?: SignalDisposition | undefined
}

/** Whether a process will act on the signals teardown would spend grace on. */
export interface SignalDisposition {
  /** SIGTERM is ignored, or blocked without a handler: waiting for it to act would only waste the grace. */
  readonly termIgnored: boolean
  /** SIGHUP is ignored, or blocked without a handler. */
  readonly hupIgnored: boolean
  /**
   * A handler runs on SIGTERM, so the process may use the grace to clean up; without one (and not
   * ignored) SIGTERM ends it on delivery. Unknown (`undefined`) counts as handled.
   */
  readonly termHandled?: boolean
}

/** Which processes a member scan may adopt. */
export interface MemberScope {
  /** The top-level process. Its tree is walked while its identity holds. */
  readonly shell: ProcessIdentity
  /** Processes seen earlier; their subtrees are walked too, even after they reparented. */
  readonly tracked: readonly ProcessIdentity[]
  /** Also sweep same-session members and processes holding the terminal (teardown). */
  readonly thorough: boolean
  /** The PTY's device while the PTY is still open; holders of it are adopted in a thorough scan. */
  readonly terminalDevice?: number | undefined
  /** Clock tick at which the shell was first seen gone; later-started session members are not adopted. */
  readonly shellGoneTick?: number | undefined
  /**
   * Top-level pids of the host's other terminals whose exit was not reported yet: the host forked
   * them itself, so they are never this session's orphans, and a thorough scan skips them unread
   * (with many sessions open they are most of the host's children). Only a pid reaped and reused
   * between node-pty's wait and its exit report could hide an orphan here; that window is accepted.
   */
  readonly otherTerminals?: ReadonlySet<number> | undefined
}

/** Result of a member scan. */
export interface MemberScan {
  /** Live (non-zombie) members other than the shell, children before their parents. */
  readonly members: readonly ProcessRecord[]
  /** Set when this scan was the first to find the shell gone: the fence tick to remember. */
  readonly shellGoneTick?: number | undefined
}

/**
 * The platform-specific reads teardown, signalling and inspection are built on. Linux reads
 * /proc, macOS runs `ps`; tests inject fixtures. Reads never throw: unreadable means absent.
 */
export interface ProcessInspector {
  /** The process's current record if `identity` still holds (zombies included). */
  record(identity: ProcessIdentity): Promise<ProcessRecord | undefined>
  /**
   * `record`, read synchronously, where that costs microseconds (Linux: one /proc read): teardown
   * then signals the shell in the closing caller's own turn. Absent where a read runs a program.
   */
  recordNow?(identity: ProcessIdentity): ProcessRecord | undefined
  /** The current record of a pid, whatever its identity (used once, right after spawn). */
  identify(pid: number): Promise<ProcessRecord | undefined>
  /**
   * `identify`, read synchronously where that costs microseconds (Linux): a spawn then registers its
   * child with the host-death watchdog in the turn that forked it. Absent where a read runs a program.
   */
  identifyNow?(pid: number): ProcessRecord | undefined
  /** One-pass foreground inspection; records the descendants it walked through `remember`. */
  foreground(shell: ProcessIdentity, sequence: number, remember: (records: readonly ProcessRecord[]) => void): Promise<ForegroundFacts | undefined>
  /** Live members of the session per `scope`, children first. */
  members(scope: MemberScope): Promise<MemberScan>
  /** The same scan, synchronously, for the host's exit handler. */
  membersSync(scope: MemberScope): MemberScan
  /** The identities among `identities` that are still alive (identity holds and not a zombie). */
  alive(identities: readonly ProcessIdentity[]): Promise<ProcessIdentity[]>
  /** Synchronous `alive`, for the host's exit handler. */
  aliveSync(identities: readonly ProcessIdentity[]): ProcessIdentity[]
  /** SIGTERM/SIGHUP disposition, or `undefined` when the platform cannot tell. */
  disposition(identity: ProcessIdentity): Promise<SignalDisposition | undefined>
  /**
   * True when `pid` runs the very program image of `parent` with the same arguments: a fork that has
   * not exec'd yet (or a subshell). False when either is gone or the platform cannot tell.
   */
  sameImage(pid: number, parent: number): Promise<boolean>
}
