/**
 * What a caller asks for when it allocates a terminal. `signal` cancels the allocation only:
 * once `spawnTerminal` resolved, the handle's `terminate()` is the way to end the session.
 */
export interface TerminalSpawnSpec {
  /** Executable and arguments; `argv[0]` is resolved on the final environment's `PATH`. */
  readonly argv: readonly string[]
  /** Absolute working directory; it must exist. */
  readonly cwd: string
  /**
   * Explicit environment overrides, applied after the inherited environment was scrubbed
   * (see `scrubEnvironment`): they win, and `undefined` removes a name.
   */
  readonly env?: Readonly<Record<string, string | undefined>>
  /**
   * Variables whose value is a file the provider writes, with this content, on the machine where
   * the terminal runs (a startup file such as `PYTHONSTARTUP`, which must exist there, not here):
   * each name is set to that file's path, after `env`. At most {@link MAX_ENV_FILES} files of
   * {@link MAX_ENV_FILE_BYTES} UTF-8 bytes each; the file is private to the user.
   */
  readonly envFiles?: Readonly<Record<string, string>>
  /** Terminal height in rows (1–65535). */
  readonly rows: number
  /** Terminal width in columns (1–65535). */
  readonly cols: number
  /** How long teardown lets a process that handles SIGTERM use before SIGKILL (0–2147483647 ms). */
  readonly graceMs: number
  /** Aborting before the process exists rejects with `SPAWN_ABORTED`. */
  readonly signal?: AbortSignal
  /**
   * Caps for the whole session (every process it starts, however it detaches). Best effort: a
   * provider that cannot enforce one starts the terminal anyway and says why in `handle.limits`.
   */
  readonly limits?: TerminalLimits
  /**
   * Runs `argv` inside a wrapper (a sandbox) that the provider may have started ahead. With it,
   * `argv` is the program inside; a provider without warm starts spawns what `wrap(argv)` returns.
   */
  readonly wrapper?: SpawnWrapper
  /**
   * Keep the terminal running after the client that spawned it is gone, for another client of the
   * same OS user to adopt (see {@link SubprocessRuntime.adoptTerminal}). Only a provider whose
   * terminals live outside the client's process can honour it; the others refuse it with `INVALID_SPEC`.
   */
  readonly durable?: DurableTerminalSpec
  /**
   * Which of the provider's places runs the terminal (a named target of dsh-subprocess-remote: a
   * machine over ssh, a container); absent: the provider's default. A provider refuses a name it
   * does not know with `UNKNOWN_TARGET`; dsh-subprocess-local knows only {@link LOCAL_TARGET}.
   */
  readonly target?: string
}

/** The target every provider has: this machine (dsh-subprocess-remote's per-user socket session host). */
export const LOCAL_TARGET = 'local'

/** How a durable terminal outlives its client. */
export interface DurableTerminalSpec {
  /** Unique among this user's durable terminals on one provider (the registry's session id); adoption names it. */
  readonly key: string
  /** How long it stays unadopted after its client went, before it closes with its whole tree (1–2147483647 ms). */
  readonly ttlMs: number
  /** Output bytes kept for an adopter to replay (the newest ones; at least the window of the flow control). */
  readonly retainBytes: number
}

/** Most {@link TerminalSpawnSpec.envFiles} one spawn may carry. */
export const MAX_ENV_FILES = 8

/** Upper bound of one {@link TerminalSpawnSpec.envFiles} content: a startup file, never a payload. */
export const MAX_ENV_FILE_BYTES = 65_536

/** Upper bound of {@link SubprocessTerminalHandle.setFacts}: what an adopter needs is small. */
export const MAX_TERMINAL_FACTS_BYTES = 16_384

/** A durable terminal no client holds now, as {@link SubprocessRuntime.listDetached} reports it. */
export interface DetachedTerminal {
  /** Its {@link DurableTerminalSpec.key}. */
  readonly key: string
  /** Its top-level process. */
  readonly pid: number
  /** When its last client went (epoch milliseconds). */
  readonly detachedAt: number
  /** What its last client stored with `setFacts` (`''` when nothing). */
  readonly facts: string
  /** Output bytes it produced so far (the offset after its newest byte). */
  readonly outputBytes: number
  /** How its top-level process ended, when it did while detached. */
  readonly exit?: TerminalExit
  /** The provider's target it runs on (see {@link TerminalSpawnSpec.target}), when the provider has targets. */
  readonly target?: string
}

/** A target of the provider that its last {@link SubprocessRuntime.listDetached} could not ask, and why. */
export interface UnreachableTarget {
  /** The target's name. */
  readonly target: string
  /** Why it did not answer (a model reads it: a timeout, a refused connection, …). */
  readonly reason: string
}

/** A detached terminal taken over: a live handle, the facts its last client stored, and where its replay starts. */
export interface AdoptedTerminal {
  /** The terminal, with the same contract as a spawned one. Its first output listener receives the replay. */
  readonly handle: SubprocessTerminalHandle
  /** What the last client stored with `setFacts`. */
  readonly facts: string
  /** Absolute offset of the first replayed byte (the oldest one still retained; 0 when nothing was dropped). */
  readonly replayFrom: number
}

/**
 * How a program is wrapped (e.g. confined), so that a provider can start the wrapper ahead of need
 * with a launcher inside and hand the program to it later: the costly part leaves the spawn's path.
 */
export interface SpawnWrapper {
  /** Everything the wrapper depends on except the program, cwd and environment: only equal keys share a launcher. */
  readonly key: string
  /** The argv that runs `argv` wrapped, for a spawn started now in `spec.cwd`. */
  wrap(argv: readonly string[]): Promise<readonly string[]>
  /**
   * The same wrapping made ahead for a launcher told its cwd later, with the check that it is still
   * what `wrap` would make; undefined when it cannot be made ahead. Optional.
   */
  wrapAhead?(argv: readonly string[]): Promise<WrappedAhead | undefined>
}

/** A wrapper started ahead: its argv, whether it may still be used, and when it must go. */
export interface WrappedAhead {
  /** The argv to spawn. */
  readonly argv: readonly string[]
  /** Whether it still equals what `wrap` would make now (cheap, synchronous). */
  current(): boolean
  /** Aborts once it may never be used (its provider unloads): the provider then ends it. */
  readonly expired: AbortSignal
}

/** Resource caps for one terminal session; an absent field means no cap. */
export interface TerminalLimits {
  /** Tasks (processes and threads) the session may hold at once; a fork beyond it fails (EAGAIN). */
  readonly maxProcesses?: number
  /** Memory the session may use, in bytes; beyond it the kernel reclaims, then kills in the session. */
  readonly maxMemoryBytes?: number
}

/**
 * The caps in force for one terminal, as the provider set them (memory as the kernel stored it,
 * rounded down to a page). A field is absent when no cap of that kind is in force.
 */
export interface AppliedTerminalLimits extends TerminalLimits {
  /** Why a requested cap is not in force (no usable cgroup controller, …); absent when all are. */
  readonly notApplied?: string
}

/** How the top-level process ended: exactly one of the two fields is non-null. */
export interface TerminalExit {
  /** Exit status when the process exited normally. */
  readonly exitCode: number | null
  /** Signal name when the process was ended by a signal. */
  readonly signal: NodeJS.Signals | null
}

/** Receives raw terminal output in arrival order; decoding and sanitizing are the consumer's job. */
export type TerminalOutputListener = (chunk: Buffer) => void

/** The syscalls through which a thread can be proven to wait for terminal input. */
export type StdinWaitSyscall = 'read' | 'select' | 'pselect6' | 'poll' | 'ppoll' | 'epoll_wait' | 'epoll_pwait' | 'epoll_pwait2'

/**
 * The syscalls a provider names in thread samples: the stdin waits, plus the ones that take no
 * terminal input at all (sleeps, waits for children, futexes, signal waits, sockets), so a consumer
 * can say what a program that does not read the terminal is doing ("sleep in clock_nanosleep").
 */
export type KnownSyscall =
  | StdinWaitSyscall
  | 'nanosleep'
  | 'clock_nanosleep'
  | 'wait4'
  | 'waitid'
  | 'futex'
  | 'futex_waitv'
  | 'pause'
  | 'rt_sigsuspend'
  | 'rt_sigtimedwait'
  | 'accept'
  | 'accept4'
  | 'connect'
  | 'recvfrom'
  | 'recvmsg'

/**
 * What one thread of the foreground group was doing when it was sampled:
 * `stdin-wait` — blocked waiting for input from this terminal (proven, see {@link StdinWait});
 * `blocked` — blocked in any other way (another syscall, other fds, stopped);
 * `running` — on or queued for a CPU; `unknown` — its state could not be read or decoded.
 */
export type ThreadState = 'stdin-wait' | 'blocked' | 'running' | 'unknown'

/** One sampled thread of the foreground group. Threads are identified by `pid`, `tid` and `started`. */
export interface ThreadSample {
  /** Process id (thread-group id). */
  readonly pid: number
  /** Thread id; equals `pid` for the main thread. */
  readonly tid: number
  /** Opaque start identity of the process, so a recycled pid never matches an older sample. */
  readonly started: string
  /** What the thread was doing. */
  readonly state: ThreadState
  /** Syscall number the thread was blocked in (states `stdin-wait` and `blocked`, when known). */
  readonly syscall?: number
  /** Name of `syscall` when the provider knows it (a number outside {@link KnownSyscall} has none). */
  readonly syscallName?: KnownSyscall
  /**
   * True when the thread is proven not to read this terminal while it stays blocked: its syscall
   * takes no terminal input (a sleep, a wait for children, a futex, a signal wait, a socket), or it
   * reads or waits only on files proven not to be this terminal. Absent when not proven.
   */
  readonly notReading?: boolean
  /** The terminal fd it waits on (state `stdin-wait`). */
  readonly fd?: number
  /** Context-switch counters, sampled for threads blocked in one of the wait syscalls. */
  readonly voluntaryCtxtSwitches?: number
  /** See `voluntaryCtxtSwitches`; a thread that ran since an earlier sample has a higher sum. */
  readonly nonvoluntaryCtxtSwitches?: number
}

/** Proof that a thread is blocked waiting for input from this terminal, with its run counters. */
export interface StdinWait extends ThreadSample {
  /** Always `stdin-wait`. */
  readonly state: 'stdin-wait'
  /** Kernel syscall number. */
  readonly syscall: number
  /** Decoded name of the wait. */
  readonly syscallName: StdinWaitSyscall
  /** The terminal fd in the wait (0 for ordinary stdin; a `/dev/tty` fd for password prompts). */
  readonly fd: number
  /** `voluntary_ctxt_switches` of the thread: it grows every time the thread blocks again. */
  readonly voluntaryCtxtSwitches: number
  /** `nonvoluntary_ctxt_switches` of the thread: it grows when the thread is preempted. */
  readonly nonvoluntaryCtxtSwitches: number
  /**
   * The timeout the wait was called with (ms, rounded up), when it has one that could be read: such
   * a wait ends by itself. Absent for a wait without a timeout and where the provider cannot tell.
   */
  readonly timeoutMs?: number
}

/**
 * The terminal's line discipline, as its termios says at the moment it was read: what a program
 * that reads the terminal asked for. Password prompts turn `echo` off; raw-key programs (editors,
 * pagers, `read -n1`) turn `canonical` off; a line reader leaves both on.
 */
export interface TerminalModes {
  /** `ECHO`: the terminal echoes what is typed. */
  readonly echo: boolean
  /** `ICANON`: input reaches a reader line by line, after Enter; off, every key reaches it at once. */
  readonly canonical: boolean
}

/**
 * The process a foreground inspection names as "the program in front": the one holding a proven
 * stdin wait, else the group leader, else the first live member of the group.
 */
export interface ForegroundProgram {
  /** Process id. */
  readonly pid: number
  /** Opaque start identity, so the same program is recognised across inspections. */
  readonly started: string
  /** Why this process was named: it holds a proven wait, it leads the group, or the leader is gone. */
  readonly role: 'waiting' | 'leader' | 'member'
  /** The kernel's name for it (Linux `comm`, at most 15 bytes; macOS `ucomm`), e.g. `python3`. */
  readonly command: string
  /** Basename of its `argv[0]` as the process shows it now, when readable. */
  readonly argv0?: string
  /** Milliseconds since it started, when known (10 ms resolution on Linux, 1 s on macOS). */
  readonly elapsedMs?: number
  /**
   * Its pid in the innermost pid namespace, when it runs in a nested one (a sandbox): the pid it
   * sees itself and reports, e.g. in a prompt marker. Absent when that is `pid`.
   */
  readonly namespacePid?: number
}

/** What an inspection reads besides the facts every inspection samples. */
export interface InspectOptions {
  /**
   * Also read the terminal's echo and canonical flags. It costs more than the plain inspection (the
   * local provider asks a helper process), so ask when the shell is not sitting at its prompt.
   */
  readonly terminalModes?: boolean
}

/**
 * What one inspection proved about a stdin wait. Three states rather than two flags, because
 * "none proven" means something else where nothing can ever be proven.
 */
export type StdinWaitProof = 'proven' | 'unproven' | 'unprovable'

/**
 * Facts about the terminal's foreground process group, as sampled by one inspection.
 * A provider reports facts only; deciding what they mean for readiness is the consumer's policy.
 */
export interface ForegroundFacts {
  /** Increases with every inspection of one handle, in the order the inspections started. */
  readonly sequence: number
  /** The terminal's foreground process group (`tpgid`). */
  readonly processGroupId: number
  /**
   * True when the foreground group is the shell's group (the shell is in front): the group pinned
   * with {@link SubprocessTerminalHandle.pinShellGroup}, else the top-level process's own group.
   * The two differ when the shell runs under a wrapper (a sandbox launcher such as bwrap): the
   * top-level process is then the wrapper, and an interactive shell leads a group of its own.
   */
  readonly isShellGroup: boolean
  /**
   * Whether the group is proven blocked reading the terminal: `proven` (some thread is), `unproven`
   * (the platform can prove it, none is proven) or `unprovable` (macOS, unsupported CPU). Read it
   * with `isStdinWaitProven`, `canProveStdinWait` and their siblings rather than by hand.
   */
  readonly stdinWaitProof: StdinWaitProof
  /** True when every thread of every member process of the group was sampled with a known state. */
  readonly complete: boolean
  /** The threads proven to wait for terminal input (a subset of `threads`). */
  readonly waits: readonly StdinWait[]
  /** Every sampled thread of the group's member processes. */
  readonly threads: readonly ThreadSample[]
  /**
   * True when the sample is complete and every thread is proven not to read this terminal
   * ({@link ThreadSample.notReading}): nothing in front can take input right now. Absent where the
   * provider cannot prove it.
   */
  readonly notReadingProven?: boolean
  /** The program in front (see {@link ForegroundProgram}); absent when no member could be read. */
  readonly program?: ForegroundProgram
  /** The terminal's flags, only when asked for ({@link InspectOptions.terminalModes}) and readable. */
  readonly terminalModes?: TerminalModes
}

/**
 * A live terminal: a PTY whose top-level process (the "shell") and whole process tree the
 * handle owns. Every method is safe to call after the process exited.
 */
export interface SubprocessTerminalHandle {
  /** Process id of the top-level process. */
  readonly pid: number
  /** The caps in force for this session (empty when none were requested). */
  readonly limits: AppliedTerminalLimits
  /** How the top-level process ended, once it did; `undefined` while it runs. */
  readonly exit: TerminalExit | undefined
  /**
   * Resolves when the top-level process exited, after every output chunk the PTY delivered has
   * been passed to the listeners (or held for the first one). Never rejects.
   */
  readonly done: Promise<TerminalExit>
  /**
   * Subscribe to output. The first listener synchronously receives, before this returns, every
   * chunk that arrived before anyone subscribed; later listeners see chunks from then on.
   * Returns the unsubscribe function.
   */
  onOutput(listener: TerminalOutputListener): () => void
  /**
   * Send bytes (strings as UTF-8) to the terminal, with no newline conversion. Resolves once the
   * provider handed them to the PTY, in call order; rejects with `TERMINAL_EXITED` after exit.
   */
  write(data: string | Uint8Array): Promise<void>
  /** Change the window size (SIGWINCH to the foreground group). No-op after exit; bad sizes throw `INVALID_SPEC`. */
  resize(rows: number, cols: number): void
  /**
   * Sample the foreground group in one pass. Resolves `undefined` when there is no group to report
   * (the top-level process is gone, or has no controlling terminal). Never rejects. `options` asks
   * for more than the plain sample (the terminal's flags); a provider that cannot read them omits them.
   */
  inspectForeground(options?: InspectOptions): Promise<ForegroundFacts | undefined>
  /**
   * Deliver a real signal to the foreground group resolved at this moment; resolves its pgid. A
   * provider that can see a command between its fork and its exec (the shell's group still in front,
   * or a job led by a fork that still has the shell's handlers) waits a bounded moment for it to pass,
   * so the signal reaches the program rather than being swallowed. Where it cannot watch that window
   * to its end, it delivers a SIGINT to a job once more when nothing followed within a moment.
   * Rejects with `NO_FOREGROUND_GROUP` when it cannot be resolved and with `REFUSED_SHELL_KILL`
   * for SIGKILL aimed at the shell's group (see {@link SubprocessTerminalHandle.pinShellGroup})
   * or at the top-level process's own group: either would end the session, which is
   * `terminate()`'s job.
   */
  signalForeground(signal: NodeJS.Signals): Promise<number>
  /**
   * Declare which process group is the shell's, for the rest of this handle's life. Until then the
   * shell's group is taken to be the top-level process's own group, which is right only when the
   * shell *is* the top-level process. A consumer that knows the shell sits idle in front (it is at
   * its startup prompt and nothing was typed yet) pins the foreground group it inspected at that
   * moment; from then on `ForegroundFacts.isShellGroup` and the SIGKILL refusal use that group.
   * Pinning again replaces the group; after exit it is a no-op. Throws `INVALID_SPEC` for a value
   * that is not a positive integer.
   */
  pinShellGroup(processGroupId: number): void
  /**
   * Tear the whole session down and resolve once it is quiescent and the exit was observed.
   * Idempotent and shared while in flight; rejects with `CLEANUP_FAILED` (listing the surviving
   * pids) and may then be called again to retry.
   */
  terminate(): Promise<void>
  /**
   * Store a small opaque value (at most {@link MAX_TERMINAL_FACTS_BYTES} UTF-8 bytes) with a durable
   * terminal, replacing the last one, for whoever adopts it. Present only on durable terminals.
   */
  setFacts?(facts: string): void
  /**
   * Hear when a durable terminal's link to it was lost while the terminal lives on where it runs
   * (a cut network to its target): a call waiting on it can end now with `error` (`TARGET_UNREACHABLE`)
   * instead of by its own timeout; the provider adopts the terminal again on the next call. Returns
   * the unsubscribe function. Present only where links can be lost and come back.
   */
  onLinkLost?(listener: (error: Error) => void): () => void
}
