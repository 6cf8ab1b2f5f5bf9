import { Buffer } from 'node:buffer'
import type { ForegroundFacts, StdinWait, SubprocessTerminalHandle, TerminalExit, TerminalOutputListener, ThreadSample } from 'dsh-subprocess'
import { SubprocessError } from 'dsh-subprocess'
import { Deferred } from 'dsh-testkit'

/** The nonce every fake session uses. */
export const NONCE = 424242

/** The REPL nonce every fake session uses (a Python prompt marker carries it). */
export const REPL_NONCE = 515151

/** The session's own marker with `status`, as PROMPT_COMMAND prints it. */
export function marker(status = 0, nonce = NONCE): string {
  return `\x1b]133;D;${nonce}${String(status).padStart(3, '0')}\x07`
}

/** Marker plus the controlled prompt: what bash prints when it is ready. */
export function prompt(status = 0): string {
  return `${marker(status)}dsh> `
}

/** The state of one thread of the foreground group, as a test describes it. */
export interface FakeThread {
  pid: number
  tid?: number
  state: 'stdin-wait' | 'blocked' | 'running'
  /** Context switches; bump them to say "it ran". */
  switches: number
  syscall?: number
  /** Name of the wait for `stdin-wait` threads (default `pselect6`, a multiplexed wait). */
  syscallName?: 'read' | 'pselect6' | 'poll' | 'epoll_wait'
}

/** The foreground group as a test describes it. */
export interface FakeForeground {
  pgid: number
  shell: boolean
  threads: FakeThread[]
}

/** Shell pid (and group) of every fake terminal. */
export const SHELL_PID = 4242

/** The shell at its prompt: in front, blocked in pselect6 on the terminal. */
export function shellWaiting(switches = 10): FakeForeground {
  return { pgid: SHELL_PID, shell: true, threads: [{ pid: SHELL_PID, state: 'stdin-wait', switches, syscall: 270 }] }
}

/** The shell in front but busy (running a builtin, or between reads). */
export function shellRunning(): FakeForeground {
  return { pgid: SHELL_PID, shell: true, threads: [{ pid: SHELL_PID, state: 'running', switches: 0 }] }
}

/** A child job in front, blocked in something other than a terminal read (e.g. `sleep`). */
export function childBlocked(pgid = 5000): FakeForeground {
  return { pgid, shell: false, threads: [{ pid: pgid, state: 'blocked', switches: 1, syscall: 230 }] }
}

/** A child job in front, waiting for terminal input (a REPL at its prompt). */
export function childWaiting(pgid = 5000, switches = 5): FakeForeground {
  return { pgid, shell: false, threads: [{ pid: pgid, state: 'stdin-wait', switches, syscall: 270 }] }
}

/**
 * A scriptable {@link SubprocessTerminalHandle}. Output, foreground state, exit, and the timing of
 * writes, inspections and signals are all in the test's hands, so races can be staged exactly.
 */
export class FakeTerminal implements SubprocessTerminalHandle {
  readonly pid = SHELL_PID
  /** A fake enforces nothing. */
  readonly limits = {}
  readonly done: Promise<TerminalExit>
  exit: TerminalExit | undefined
  foreground: FakeForeground | undefined = shellWaiting()
  /** When true, the stdin-wait tier is unsupported (like macOS). */
  noExactTier = false
  /** Every write, in order. */
  readonly writes: string[] = []
  /** Every delivered signal with the group it went to. */
  readonly signals: { signal: string; pgid: number }[] = []
  /** A log of writes and signals in order, for ordering assertions. */
  readonly events: string[] = []
  /** Inspections started so far. */
  inspections = 0
  /** When set, the next writes wait for the test to resolve them. */
  holdWrites = false
  readonly heldWrites: Deferred[] = []
  /** When set, inspections wait for the test (each gets a Deferred resolved with the facts at that moment). */
  holdInspections = false
  readonly heldInspections: Deferred[] = []
  /** When set, signals wait for the test. */
  holdSignals = false
  readonly heldSignals: Deferred[] = []
  /** Every group pinned as the shell's, in order; once pinned, `isShellGroup` compares with the last. */
  readonly pins: number[] = []
  terminateCalls = 0
  /** Set to make the next terminate() calls fail. */
  failTerminate: Error | undefined
  #sequence = 0
  #listeners = new Set<TerminalOutputListener>()
  #backlog: Buffer[] | undefined = []
  #resolveDone!: (exit: TerminalExit) => void

  constructor() {
    this.done = new Promise((resolve) => {
      this.#resolveDone = resolve
    })
  }

  onOutput(listener: TerminalOutputListener): () => void {
    this.#listeners.add(listener)
    const backlog = this.#backlog
    this.#backlog = undefined
    for (const chunk of backlog ?? []) listener(chunk)
    return () => this.#listeners.delete(listener)
  }

  /** Deliver output now (synchronously, like one data callback). */
  emit(text: string): void {
    const chunk = Buffer.from(text, 'utf8')
    if (this.#backlog) this.#backlog.push(chunk)
    else for (const listener of this.#listeners) listener(chunk)
  }

  async write(data: string | Uint8Array): Promise<void> {
    if (this.exit) throw new SubprocessError('TERMINAL_EXITED', 'terminal has exited; input was not written')
    const text = typeof data === 'string' ? data : Buffer.from(data).toString('utf8')
    if (this.holdWrites) {
      const held = new Deferred()
      this.heldWrites.push(held)
      await held.promise
    }
    this.writes.push(text)
    this.events.push(`write ${JSON.stringify(text)}`)
  }

  resize(): void {}

  async inspectForeground(): Promise<ForegroundFacts | undefined> {
    this.inspections += 1
    const sequence = ++this.#sequence
    if (this.holdInspections) {
      const held = new Deferred()
      this.heldInspections.push(held)
      await held.promise
    }
    return this.facts(sequence)
  }

  /** Facts for the current foreground state. */
  facts(sequence = ++this.#sequence): ForegroundFacts | undefined {
    const fg = this.foreground
    if (this.exit || !fg) return undefined
    const threads: ThreadSample[] = fg.threads.map((thread) => {
      const base = { pid: thread.pid, tid: thread.tid ?? thread.pid, started: `s${thread.pid}` }
      if (thread.state === 'running') return { ...base, state: 'running' }
      return {
        ...base,
        state: thread.state,
        syscall: thread.syscall ?? 270,
        voluntaryCtxtSwitches: thread.switches,
        nonvoluntaryCtxtSwitches: 0,
        ...(thread.state === 'stdin-wait' ? { fd: 0, syscallName: thread.syscallName ?? 'pselect6' } : {}),
      }
    })
    const waits = this.noExactTier ? [] : (threads.filter((thread) => thread.state === 'stdin-wait') as StdinWait[])
    return {
      sequence,
      processGroupId: fg.pgid,
      isShellGroup: this.#shellGroup(fg),
      stdinWaitProof: this.noExactTier ? 'unprovable' : waits.length > 0 ? 'proven' : 'unproven',
      complete: !this.noExactTier,
      waits,
      threads: this.noExactTier ? [] : threads,
    }
  }

  async signalForeground(signal: NodeJS.Signals): Promise<number> {
    if (this.holdSignals) {
      const held = new Deferred()
      this.heldSignals.push(held)
      await held.promise
    }
    const fg = this.foreground
    if (this.exit || !fg) throw new SubprocessError('NO_FOREGROUND_GROUP', 'cannot resolve the foreground process group')
    if (signal === 'SIGKILL' && (fg.shell || this.#shellGroup(fg)))
      throw new SubprocessError('REFUSED_SHELL_KILL', 'refusing to SIGKILL the terminal shell; terminate the terminal session instead')
    this.signals.push({ signal, pgid: fg.pgid })
    this.events.push(`${signal} ${fg.pgid}`)
    return fg.pgid
  }

  pinShellGroup(processGroupId: number): void {
    if (!Number.isSafeInteger(processGroupId) || processGroupId <= 0) throw new SubprocessError('INVALID_SPEC', 'bad group')
    if (!this.exit) this.pins.push(processGroupId)
  }

  /** Whether `fg` is the shell's group: the pinned group once one was pinned, else what the test said. */
  #shellGroup(fg: FakeForeground): boolean {
    const pinned = this.pins.at(-1)
    return pinned === undefined ? fg.shell : fg.pgid === pinned
  }

  /** The shell exits: the exit is observed, then `done` resolves. */
  finish(exit: TerminalExit = { exitCode: 0, signal: null }): void {
    if (this.exit) return
    this.exit = exit
    this.#resolveDone(exit)
  }

  async terminate(): Promise<void> {
    this.terminateCalls += 1
    if (this.failTerminate) throw this.failTerminate
    this.finish({ exitCode: null, signal: 'SIGHUP' })
  }
}
