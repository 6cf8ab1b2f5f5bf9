import { constants } from 'node:os'
import { setImmediate as nextMacrotask, setTimeout as sleep } from 'node:timers/promises'
import {
  type AppliedTerminalLimits,
  type ForegroundFacts,
  canProveStdinWait,
  type InspectOptions,
  isStdinWaitProven,
  isStdinWaitUnproven,
  SubprocessError,
  type SubprocessTerminalHandle,
  type TerminalExit,
  type TerminalModes,
  type TerminalOutputListener,
  validateTerminalSize,
} from 'dsh-subprocess'
import type { IPty } from 'node-pty'
import { joinFailure } from './cgroup/launcher'
import type { SessionCgroup } from './cgroup/session'
import { onProcessExit } from './exit-guard'
import type { ProcessIdentity, ProcessInspector, ProcessRecord } from './inspector'
import type { TerminalModesSource } from './modes/modes-source'
import { OutputChannel } from './output'
import { ownsTerminal } from './ownership'
import { drainBeforeDestroy } from './pty-drain'
import { PtyWriter } from './pty-writer'
import { killSync, type SignalSender, teardown, type TeardownTarget } from './teardown'
import { Tracker } from './tracker'
import type { LauncherPrelude } from './warm/prelude'

/** What a {@link LocalTerminal} is built from. */
export interface LocalTerminalOptions {
  /** The spawned PTY (created with `encoding: null`, so data arrives as Buffers). */
  readonly pty: IPty
  /** Platform reads. */
  readonly inspector: ProcessInspector
  /** Teardown grace for processes that handle SIGTERM. */
  readonly graceMs: number
  /** How long SIGKILLed processes get to disappear. */
  readonly killWaitMs: number
  /** Output held for the first subscriber before the PTY is paused. */
  readonly backlogBytes: number
  /** Register a synchronous SIGKILL sweep for host exit. */
  readonly exitCleanup: boolean
  /** Where listener exceptions go. */
  readonly report: (error: unknown) => void
  /** Called once teardown succeeded. */
  readonly onTerminated: (terminal: LocalTerminal) => void
  /** Top-level pids of the host's other terminals whose exit was not reported yet (skipped by teardown scans). */
  readonly otherTerminals?: (terminal: LocalTerminal) => ReadonlySet<number>
  /** The session's cgroups, joined by the launcher the PTY runs; removed after teardown. */
  readonly cgroup?: SessionCgroup | undefined
  /** The caps in force (default: none requested). */
  readonly limits?: AppliedTerminalLimits
  /** Where `inspectForeground({ terminalModes: true })` reads the PTY's flags (default: never read). */
  readonly modes?: TerminalModesSource | undefined
  /** Set for a warm launcher: its own output is withheld until {@link LocalTerminal.launch} started the program. */
  readonly prelude?: LauncherPrelude | undefined
}

/** How long a fresh child gets to become a session leader with the PTY as its controlling terminal. */
const OWNERSHIP_TIMEOUT_MS = 2000

/** How long the cgroup launcher gets to join the session's cgroups before the spawn fails. */
const JOIN_TIMEOUT_MS = 5000

/** Longest wait for the foreground to get past a fork-to-exec transition before a signal goes anyway. */
const TRANSITION_WAIT_MS = 100

/** How long a SIGINT that may have landed in a transition gets to show an effect before it goes once more. */
const REPEAT_SIGINT_MS = 100

/**
 * The foreground's fork-to-exec state as one inspection sees it: `unseen` where the platform cannot
 * watch the whole transition (no stdin-wait proof: the shell's own fork stage is invisible).
 */
type Transition = 'in-transition' | 'settled' | 'unseen'

/** Tracked descendants beyond which an inspection also drops the ones that are gone (bounded memory). */
const PRUNE_ABOVE = 64

const SIGNAL_NAMES = new Map<number, NodeJS.Signals>(Object.entries(constants.signals).map(([name, number]) => [number, name as NodeJS.Signals]))

/** A node-pty terminal plus the inspector and teardown that make its whole tree manageable. */
export class LocalTerminal implements SubprocessTerminalHandle {
  readonly pid: number
  readonly done: Promise<TerminalExit>
  readonly limits: AppliedTerminalLimits
  readonly #pty: IPty
  /** Writes input without node-pty's thread-pool queue (see {@link PtyWriter}); absent where node-pty differs. */
  readonly #writer: PtyWriter | undefined
  readonly #inspector: ProcessInspector
  readonly #tracker: Tracker
  readonly #output: OutputChannel
  #graceMs: number
  readonly #killWaitMs: number
  readonly #onTerminated: (terminal: LocalTerminal) => void
  readonly #otherTerminals: (terminal: LocalTerminal) => ReadonlySet<number>
  readonly #unguard: () => void
  readonly #cgroup: SessionCgroup | undefined
  readonly #modes: TerminalModesSource | undefined
  /** The PTY's device path (node-pty's `ptsName`), where its flags are read. */
  readonly #device: string | undefined
  /** The top-level process's record once it owned the PTY: its `ttyNr` is the PTY's device number (Linux). */
  #owner: ProcessRecord | undefined
  #shell: ProcessIdentity
  /** The group pinned as the shell's; undefined means the top-level process's own group. */
  #shellGroup: number | undefined
  #exit: TerminalExit | undefined
  #sequence = 0
  /** PTY chunks read so far: a signal's visible effect is output after it. */
  #outputChunks = 0
  #closing: Promise<void> | undefined
  #ownership: Promise<void> | undefined
  #terminated = false
  /** A warm launcher's output watch, until its program's first byte. */
  #prelude: LauncherPrelude | undefined

  /**
   * Wraps a PTY right after `spawn()`: listeners are attached before anything is awaited, because
   * node-pty already reads the PTY and drops data nobody listens to. Call {@link settle} next.
   */
  constructor(options: LocalTerminalOptions) {
    const { pty } = options
    this.pid = pty.pid
    this.#pty = pty
    this.#inspector = options.inspector
    this.#shell = { pid: pty.pid, started: '' }
    this.#graceMs = options.graceMs
    this.#killWaitMs = options.killWaitMs
    this.#tracker = new Tracker(pty.pid)
    this.#onTerminated = options.onTerminated
    this.#otherTerminals = options.otherTerminals ?? (() => new Set())
    this.#cgroup = options.cgroup
    this.#modes = options.modes
    this.#device = (pty as IPty & { ptsName?: unknown }).ptsName as string | undefined
    this.limits = options.limits ?? {}
    this.#output = new OutputChannel({
      backlogBytes: options.backlogBytes,
      pause: () => pty.pause(),
      resume: () => pty.resume(),
      report: options.report,
    })
    this.#prelude = options.prelude
    this.#writer = PtyWriter.for(pty)
    pty.onData((data: string | Buffer) => this.#take(typeof data === 'string' ? Buffer.from(data) : data))
    // What node-pty would drop when it gives up waiting for its stream (a paused PTY at exit) arrives here first.
    drainBeforeDestroy(pty, (bytes) => this.#take(bytes))
    this.done = new Promise((resolve) => {
      pty.onExit(({ exitCode, signal }) => {
        this.#prelude?.ended()
        this.#exit = signal ? { exitCode: null, signal: SIGNAL_NAMES.get(signal) ?? 'SIGKILL' } : { exitCode, signal: null }
        resolve(this.#exit)
      })
    })
    this.#unguard = options.exitCleanup
      ? onProcessExit(() => {
          killSync(this.#target())
          this.#cgroup?.killSync()
        })
      : () => {}
  }

  /** One chunk read from the PTY: the warm launcher's prelude first, then the program's output, in order. */
  #take(chunk: Buffer): void {
    if (this.#prelude) {
      const program = this.#prelude.feed(chunk)
      if (program === undefined) return
      this.#prelude = undefined
      if (program.length === 0) return
      chunk = program
    }
    this.#outputChunks += 1
    this.#output.push(chunk)
  }

  /**
   * Learn the child's start identity now, where the platform reads it synchronously: true once it is
   * known. The spawn that forked the child calls it in the same turn, so nothing it awaits (and no
   * other spawn's fork) lies between the fork and the watchdog's registration.
   */
  identifyNow(): boolean {
    if (this.#shell.started) return true
    const record = this.#inspector.identifyNow?.(this.pid)
    if (record) this.#shell = { pid: this.pid, started: record.started }
    return record !== undefined
  }

  /**
   * Learn the child's start identity, so that its pid can never be mistaken for a later process,
   * and, under limits, wait until the launcher joined the session's cgroups (rejects with
   * `SPAWN_FAILED` when it could not; the caller then terminates). Whether the child already owns
   * the PTY is checked by the first signal or inspection instead: a spawn does not pay for that
   * wait, and a shell has long taken the PTY by its first prompt. `identified` runs once the start
   * identity is known, before the join is awaited.
   */
  async settle(identified?: () => void): Promise<void> {
    if (!this.identifyNow()) {
      const record = await this.#inspector.identify(this.pid)
      if (record) this.#shell = { pid: this.pid, started: record.started }
    }
    identified?.()
    if (this.#cgroup) await this.#joined(this.#cgroup)
  }

  async #joined(cgroup: SessionCgroup): Promise<void> {
    const outcome = await cgroup.awaitJoin(this.pid, this.done, JOIN_TIMEOUT_MS)
    if (outcome === 'joined') return
    if (outcome === 'timeout') {
      throw new SubprocessError(
        'SPAWN_FAILED',
        `the terminal did not join its cgroups (${cgroup.dirs.join(', ')}) within ${JOIN_TIMEOUT_MS} ms; it was not started`,
      )
    }
    // An exit before the join was seen is either the launcher's failure or a program that ran and ended at once.
    const failure = joinFailure(this.#exit?.exitCode ?? null, this.#output.held().toString('utf8'))
    if (failure) throw new SubprocessError('SPAWN_FAILED', `the terminal could not join its cgroups and was not started: ${failure}`)
  }

  /**
   * Resolves once the child ran `setsid()` and acquired the PTY as its controlling terminal (or
   * died, or `OWNERSHIP_TIMEOUT_MS` passed). Until then its stat still shows the host's session and
   * terminal, and a foreground group resolved from it could be the host's own.
   */
  #owned(): Promise<void> {
    this.#ownership ??= this.#awaitOwnership()
    return this.#ownership
  }

  async #awaitOwnership(): Promise<void> {
    await pollWithin(OWNERSHIP_TIMEOUT_MS, 10, async () => {
      const record = await this.#inspector.record(this.#shell)
      if (record && !record.zombie && ownsTerminal(record)) this.#owner = record
      return !record || record.zombie || ownsTerminal(record)
    })
  }

  /** True for a warm launcher that is alive, joined and waiting for its program (see {@link launch}). */
  get launchable(): boolean {
    return this.#prelude?.launchable === true && !this.#exit && !this.#terminated && !this.#closing
  }

  /**
   * Start the program in a warm launcher: the PTY takes the caller's size first (the program reads
   * it at start), then the frame naming the program goes in (see `launchFrame`). The teardown grace
   * becomes the caller's. Only when {@link launchable}.
   */
  launch(frame: Buffer, rows: number, cols: number, graceMs: number): void {
    if (!this.#prelude || !this.launchable) throw new SubprocessError('SPAWN_FAILED', `terminal ${this.pid} is no warm launcher waiting for a program`)
    this.#prelude.launched()
    this.#graceMs = graceMs
    this.#pty.resize(cols, rows)
    this.#input(frame)
  }

  get exit(): TerminalExit | undefined {
    return this.#exit
  }

  /** The PTY's device path (`/dev/pts/N`) as node-pty reports it, when it does. */
  get device(): string | undefined {
    return this.#device
  }

  /** The top-level process's start identity once {@link settle} read it (empty before, or when it could not). */
  get started(): string {
    return this.#shell.started
  }

  onOutput(listener: TerminalOutputListener): () => void {
    return this.#output.subscribe(listener)
  }

  /**
   * Stop reading the PTY until {@link resumeOutput} (flow control for a reader downstream, such as a
   * session host whose client fell behind); nothing is dropped, the program blocks on its writes.
   * Not part of the seam: only this provider's own users call it.
   */
  pauseOutput(): void {
    this.#output.hold()
  }

  /** Read the PTY again after {@link pauseOutput}. */
  resumeOutput(): void {
    this.#output.release()
  }

  async write(data: string | Uint8Array): Promise<void> {
    if (this.#exit || this.#terminated) throw new SubprocessError('TERMINAL_EXITED', `terminal ${this.pid} has exited; input was not written`)
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data.buffer, data.byteOffset, data.byteLength)
    if (bytes.length > 0) this.#input(bytes)
  }

  #input(bytes: Buffer): void {
    if (this.#writer) this.#writer.write(bytes)
    else this.#pty.write(bytes)
  }

  resize(rows: number, cols: number): void {
    validateTerminalSize(rows, cols)
    if (this.#exit || this.#terminated) return
    try {
      this.#pty.resize(cols, rows)
    } catch {
      // The PTY closed between the exit check and the ioctl: resizing a closed terminal is a no-op.
    }
  }

  async inspectForeground(options: InspectOptions = {}): Promise<ForegroundFacts | undefined> {
    const sequence = ++this.#sequence
    if (this.#exit || this.#terminated) return undefined
    try {
      await this.#owned()
      // The helper works in another process meanwhile: the two reads overlap.
      const modes = options.terminalModes ? this.#terminalModes().catch(() => undefined) : undefined
      let facts = await this.#inspector.foreground(this.#shell, sequence, (records) => this.#tracker.remember(records))
      if (this.#tracker.size > PRUNE_ABOVE) {
        const checked = this.#tracker.list()
        this.#tracker.retain(checked, await this.#inspector.alive(checked))
      }
      const pinned = this.#shellGroup
      if (facts && pinned !== undefined) facts = { ...facts, isShellGroup: facts.processGroupId === pinned }
      const terminalModes = await modes
      return facts && terminalModes ? { ...facts, terminalModes } : facts
    } catch {
      return undefined
    }
  }

  /**
   * The PTY's flags through its device path (node-pty's `ptsName`, checked against the device number
   * the ownership check saw). The path names this PTY only while the PTY is open: its number is free
   * for reuse once the PTY closes, and closing it first takes the terminal away from the top-level
   * process's session. So the read counts only if the top-level process still holds this terminal
   * after the reply: then the PTY was open all along. The request goes out before any await, so the
   * helper works while the /proc pass runs.
   */
  async #terminalModes(): Promise<TerminalModes | undefined> {
    if (!this.#modes || !this.#device) return undefined
    if (!this.#owner) {
      const record = await this.#inspector.record(this.#shell)
      if (record && !record.zombie && ownsTerminal(record)) this.#owner = record
    }
    if (!this.#owner) return undefined
    const device = this.#owner.ttyNr
    const modes = await this.#modes.read(this.#device, device)
    if (!modes || this.#exit || this.#terminated) return undefined
    const after = await this.#inspector.record(this.#shell)
    return after && !after.zombie && ownsTerminal(after) && after.ttyNr === device ? modes : undefined
  }

  async signalForeground(signal: NodeJS.Signals): Promise<number> {
    if (!(signal in constants.signals)) throw new SubprocessError('INVALID_SPEC', `unknown signal ${String(signal)}`)
    let transition: Transition = 'settled'
    if (!this.#exit && !this.#terminated) {
      await this.#owned()
      transition = await this.#foregroundSettled()
    }
    const record = this.#exit || this.#terminated ? undefined : await this.#inspector.record(this.#shell)
    if (!record || record.zombie || !ownsTerminal(record)) {
      throw new SubprocessError('NO_FOREGROUND_GROUP', `cannot resolve the foreground process group of terminal ${this.pid}; it has exited`)
    }
    const shellInFront = record.tpgid === record.pgid || record.tpgid === this.#shellGroup
    if (signal === 'SIGKILL' && shellInFront) {
      throw new SubprocessError('REFUSED_SHELL_KILL', 'refusing to SIGKILL the terminal shell; terminate the terminal session instead')
    }
    const chunksBefore = this.#outputChunks
    try {
      process.kill(-record.tpgid, signal)
    } catch (error) {
      throw new SubprocessError('NO_FOREGROUND_GROUP', `foreground process group ${record.tpgid} of terminal ${this.pid} is gone`, { cause: error })
    }
    if (signal === 'SIGINT' && transition !== 'settled' && !shellInFront) await this.#repeatIfSwallowed(record.tpgid, chunksBefore)
    return record.tpgid
  }

  /**
   * Resolves once the foreground is not between a command's fork and its exec, or after
   * `TRANSITION_WAIT_MS`. A signal resolved in that window misses: first the shell's own group is
   * still in front while it forks the job, then the job's group is led by a fork that still has the
   * shell's handlers and dispositions — a SIGINT is swallowed, a SIGTERM or SIGTSTP ignored.
   * Answers the last state seen: `in-transition` when the wait ran out.
   */
  async #foregroundSettled(): Promise<Transition> {
    let transition: Transition = 'settled'
    await pollWithin(TRANSITION_WAIT_MS, 5, async () => {
      transition = await this.#transition()
      return transition !== 'in-transition'
    })
    return transition
  }

  async #transition(): Promise<Transition> {
    const facts = await this.inspectForeground()
    if (!facts) return 'settled'
    // The shell in front but not waiting at its prompt: it may be forking (or running a builtin loop).
    if (isStdinWaitUnproven(facts) && facts.isShellGroup) return 'in-transition'
    if (!facts.isShellGroup && (await this.#inspector.sameImage(facts.processGroupId, this.#shellGroup ?? this.pid))) return 'in-transition'
    return canProveStdinWait(facts) ? 'settled' : 'unseen'
  }

  /**
   * A SIGINT that may have landed in a transition (unseen, or the wait ran out) and was consumed by
   * the handler a fork still has from the shell: if within {@link REPEAT_SIGINT_MS} nothing came out,
   * and the same job `target` is still in front and not reading, deliver it once more — as a person
   * presses Ctrl-C twice. Output ends the wait at once.
   */
  async #repeatIfSwallowed(target: number, chunksBefore: number): Promise<void> {
    const untouched = () => this.#outputChunks === chunksBefore && !this.#exit && !this.#terminated && !this.#closing
    await pollWithin(REPEAT_SIGINT_MS, 5, async () => !untouched())
    if (!untouched()) return
    const facts = await this.inspectForeground()
    if (!untouched() || !facts || facts.isShellGroup || facts.processGroupId !== target || isStdinWaitProven(facts)) return
    try {
      process.kill(-target, 'SIGINT')
    } catch {
      // The job left meanwhile: nothing to repeat.
    }
  }

  pinShellGroup(processGroupId: number): void {
    if (!Number.isSafeInteger(processGroupId) || processGroupId <= 0) {
      throw new SubprocessError('INVALID_SPEC', `a shell process group must be a positive integer, got ${String(processGroupId)}`)
    }
    if (this.#exit || this.#terminated) return
    this.#shellGroup = processGroupId
  }

  terminate(): Promise<void> {
    if (this.#terminated) return Promise.resolve()
    this.#closing ??= teardown(this.#target()).then(
      async (proof) => {
        // Proven empty, the cgroups are removed after the caller moved on; after the /proc scans their
        // removal is part of the proof (it SIGKILLs a process that escaped the walk).
        if (proof === 'cgroup') void this.#cgroup?.removeSoon(this.#killWaitMs)
        else await this.#cgroup?.remove(this.#killWaitMs)
        this.#terminated = true
        this.#unguard()
        this.#onTerminated(this)
      },
      (error: unknown) => {
        this.#closing = undefined
        throw error
      },
    )
    return this.#closing
  }

  #target(): TeardownTarget {
    return {
      inspector: this.#inspector,
      shell: this.#shell,
      tracker: this.#tracker,
      graceMs: this.#graceMs,
      killWaitMs: this.#killWaitMs,
      ptyOpen: () => this.#exit === undefined,
      exited: this.done,
      send: sendSignal,
      otherTerminals: () => this.#otherTerminals(this),
      containment: this.#cgroup?.joined ? this.#cgroup : undefined,
    }
  }
}

/**
 * Check `done` at once, then after a macrotask and 1, 2, 4 … ms (at most `maxStepMs` apart) until
 * it holds or `limitMs` passed: a state a child reaches within moments is seen without a busy loop.
 */
async function pollWithin(limitMs: number, maxStepMs: number, done: () => Promise<boolean>): Promise<void> {
  const deadline = performance.now() + limitMs
  for (let delay = 0; ; delay = Math.min(Math.max(delay * 2, 1), maxStepMs)) {
    if ((await done()) || performance.now() > deadline) return
    await (delay === 0 ? nextMacrotask() : sleep(delay))
  }
}

/** `process.kill` that treats "already gone" and "not ours" as nothing to do. */
const sendSignal: SignalSender = (pid, signal) => {
  try {
    process.kill(pid, signal)
  } catch {
    // ESRCH: it left on its own. EPERM: not ours to signal; it shows up as a survivor.
  }
}
