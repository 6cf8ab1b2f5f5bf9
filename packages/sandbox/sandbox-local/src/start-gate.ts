import { closeSync, constants, fstatSync, openSync, readFileSync, readSync, statSync, writeSync } from 'node:fs'
import { SandboxError } from 'dsh-sandbox'
import { type FifoPool, type HoldFifos, releaseHoldFifos } from './fifo-pool'
import { type MountCheck, mountCheckFailure } from './mount-check'
import { parseMountinfo } from './mountinfo'

/*
 * The mount check, made from the host. bwrap binds by path, so what it mounted is known only once
 * it has mounted it; `--block-fd` makes the sandbox's init wait after its last mount (capabilities
 * dropped, before the seccomp filter and the command), and `--info-fd` names that init's pid. The
 * host reads /proc/<init>/mountinfo while it waits, then releases it with one byte, or kills it.
 * Nothing of the check runs inside the sandbox, so no mount can subvert it.
 */

/** The descriptor bwrap writes `{"child-pid": N}` to (`--info-fd`), opened by the starting shell. */
export const INFO_FD = 4

/** The descriptor bwrap's init reads one byte from before it runs the command (`--block-fd`). */
export const BLOCK_FD = 5

/** The exit status of a start whose mounts were not the planned ones: its init was killed (128 + SIGKILL). */
export const MOUNT_CHECK_FAILED = 137

/** The `read` syscall's number, which /proc/<pid>/syscall shows while bwrap's init waits on `--block-fd`. */
const READ_SYSCALL: Readonly<Record<string, number>> = { x64: 0, arm64: 63 }

/** How long a held start may take; generous bounds, a start normally takes milliseconds. */
export interface GateTiming {
  /** Poll interval while waiting for bwrap, in ms. */
  readonly pollMs: number
  /** After this long without bwrap's pid (a start spawned late, or never), the interval is {@link GateTiming.idlePollMs}. */
  readonly fastMs: number
  /** The slower interval for a start not spawned within `fastMs`, in ms. */
  readonly idlePollMs: number
  /** From the hold until bwrap names its init; after that the hold's FIFOs are closed and removed (a start that comes later fails to open them). */
  readonly spawnMs: number
  /** From the init's pid until it waits on the block descriptor; after that it is killed. */
  readonly setupMs: number
}

/** The defaults: a start is normally held for a few milliseconds. */
export const DEFAULT_GATE_TIMING: GateTiming = { pollMs: 1, fastMs: 2_000, idlePollMs: 50, spawnMs: 120_000, setupMs: 30_000 }

/** What the starting shell opens for a held start: FIFOs in the hold's private directory, removed once it settles. */
export interface HeldStart {
  /** Opened for writing as {@link INFO_FD}. */
  readonly infoPath: string
  /** Opened read-write as {@link BLOCK_FD}: bwrap itself then holds a writer, so it never reads end of file. */
  readonly blockPath: string
}

/** One line for the sandbox's terminal when its mounts were not the planned ones (`reason` from mountCheckFailure). */
export function mountCheckMessage(reason: string): string {
  return `dsh-sandbox: mount check failed: ${reason}; another session may be changing the workspace`
}

/**
 * Holds starts whose mounts must be checked: `hold(check)` takes two FIFOs and watches them until
 * the sandbox it names waits after its mounts, then checks its mount table against `check`.
 */
export class StartGate {
  constructor(
    private readonly fifos: FifoPool,
    /** Told of every refused start (the reason), for the provider's log. */
    private readonly refused: (reason: string) => void = () => {},
    private readonly timing: GateTiming = DEFAULT_GATE_TIMING,
    private readonly architecture: string = process.arch,
  ) {}

  /** Hold the next start made with the returned paths; rejects with `SANDBOX_UNAVAILABLE` when no FIFO can be made. */
  async hold(check: MountCheck): Promise<HeldStart> {
    const readSyscall = READ_SYSCALL[this.architecture]
    if (readSyscall === undefined) {
      throw new SandboxError('SANDBOX_UNAVAILABLE', `the mount check knows the read syscall of x64 and arm64 only, not ${this.architecture}`)
    }
    const fifos = await this.fifos.take()
    new HeldSandbox(fifos, check, { timing: this.timing, readSyscall, refused: this.refused }).watch()
    return { infoPath: fifos.infoPath, blockPath: fifos.blockPath }
  }

  /** Close and remove the FIFOs no hold has taken yet (the plugin unloads); holds in progress settle on their own. */
  dispose(): void {
    this.fifos.dispose()
  }
}

interface HeldOptions {
  readonly timing: GateTiming
  readonly readSyscall: number
  readonly refused: (reason: string) => void
}

/** One held start, from its FIFOs to the release (or the kill) of its init. */
class HeldSandbox {
  private info = ''
  private init: { pid: number; parent: number } | undefined
  private readonly since = performance.now()
  private setupSince = 0
  private closed = false
  /** The block FIFO's identity, to recognise this hold's init among processes (a pid may be reused). */
  private readonly block: { dev: number; ino: number }

  constructor(
    private readonly fifos: HoldFifos,
    private readonly check: MountCheck,
    private readonly options: HeldOptions,
  ) {
    const { dev, ino } = fstatSync(fifos.blockFd)
    this.block = { dev, ino }
  }

  watch(): void {
    const { pollMs, fastMs, idlePollMs } = this.options.timing
    const tick = () => {
      if (!this.step()) return
      const waiting = this.init === undefined && performance.now() - this.since > fastMs
      setTimeout(tick, waiting ? idlePollMs : pollMs).unref()
    }
    tick()
  }

  /** One look; false once the start is settled. */
  private step(): boolean {
    if (this.init === undefined) return this.awaitInit()
    const state = initState(this.init, this.options.readSyscall)
    if (state === 'gone') return this.close()
    if (state === 'unreadable') return this.refuse('its state in /proc is unreadable')
    if (state === 'orphaned') return this.refuse('its bwrap ended before the check')
    if (state === 'held') return this.verify()
    if (performance.now() - this.setupSince > this.options.timing.setupMs) return this.refuse('bwrap did not finish its mounts in time')
    return true
  }

  /** Read bwrap's `{"child-pid": N}`; the init's parent (the outer bwrap) is remembered to notice its end. */
  private awaitInit(): boolean {
    if (!this.readInfo()) return this.close()
    // bwrap writes the whole object at once; a pid is taken only from a complete one.
    const pid = this.info.includes('}') ? Number(/"child-pid"\s*:\s*(\d+)/.exec(this.info)?.[1]) : Number.NaN
    if (!Number.isSafeInteger(pid) || pid <= 1) {
      // Never spawned (or spawned very late): past spawnMs the directory goes, so a later start fails to open it.
      return performance.now() - this.since <= this.options.timing.spawnMs || this.close()
    }
    // The start has opened its FIFOs: no other start may open them now. The info end stays open to
    // notice a second start that opened them before this (see verify).
    releaseHoldFifos(this.fifos, {})
    // Ours only if it holds this hold's block FIFO (so a forged or reused pid is never checked or killed).
    if (!holdsFifo(pid, this.block)) return this.close()
    const parent = parentOf(pid)
    if (parent === undefined) return this.close()
    this.init = { pid, parent }
    this.setupSince = performance.now()
    // The outer bwrap is the clone's parent with the same command line (ours names this hold's FIFOs);
    // another parent means it ended before this first look and the init was handed to a reaper.
    if (commandLine(parent) !== commandLine(pid)) return this.refuse('its bwrap ended before the check')
    return this.step()
  }

  private verify(): boolean {
    // The same argv spawned twice at once: the release byte could reach the other, unchecked init.
    this.readInfo()
    const named = [...this.info.matchAll(/"child-pid"\s*:\s*(\d+)/g)].map((match) => Number(match[1]))
    if (named.length > 1) {
      for (const other of named) if (other !== this.init!.pid && holdsFifo(other, this.block)) kill(other)
      return this.refuse("more than one start opened this hold's FIFOs")
    }
    let table: string
    try {
      table = readFileSync(`/proc/${this.init!.pid}/mountinfo`, 'utf8')
    } catch {
      return this.refuse('its mount table is unreadable')
    }
    const reason = mountCheckFailure(this.check, parseMountinfo(table))
    if (reason !== undefined) return this.refuse(reason)
    writeSync(this.fifos.blockFd, 'x')
    return this.close()
  }

  /** Kill the held init before it runs anything, after one line on its terminal. */
  private refuse(reason: string): boolean {
    const { pid } = this.init!
    const message = mountCheckMessage(reason)
    // The pid may have ended and been reused since the last look: only this hold's init is touched.
    if (!holdsFifo(pid, this.block)) return this.close()
    try {
      const stderr = openSync(`/proc/${pid}/fd/2`, constants.O_WRONLY | constants.O_APPEND | constants.O_NONBLOCK | constants.O_NOCTTY)
      try {
        writeSync(stderr, `${message}\n`)
      } finally {
        closeSync(stderr)
      }
    } catch {
      // A socket (child_process's pipes) cannot be opened through /proc: the log and the exit status still tell.
    }
    kill(pid)
    this.options.refused(message)
    return this.close()
  }

  /** Append what bwrap wrote to the info FIFO so far; false when it cannot be read. */
  private readInfo(): boolean {
    const buffer = Buffer.alloc(256)
    for (;;) {
      let count: number
      try {
        count = readSync(this.fifos.infoFd, buffer)
      } catch (error) {
        return (error as NodeJS.ErrnoException).code === 'EAGAIN'
      }
      if (count === 0) return true
      this.info += buffer.toString('latin1', 0, count)
    }
  }

  /** Settle the hold: its descriptors closed, its directory removed. */
  private close(): boolean {
    if (!this.closed) releaseHoldFifos(this.fifos)
    this.closed = true
    return false
  }
}

/** SIGKILL `pid`, which the caller found holding the hold's block FIFO just before. */
function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL')
  } catch {
    // Already gone.
  }
}

/** Whether `pid` has the FIFO with identity `fifo` as its block descriptor. */
function holdsFifo(pid: number, fifo: { dev: number; ino: number }): boolean {
  try {
    const stats = statSync(`/proc/${pid}/fd/${BLOCK_FD}`)
    return stats.dev === fifo.dev && stats.ino === fifo.ino
  } catch {
    return false
  }
}

/** The command line of `pid`, or undefined when it is gone. */
function commandLine(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1')
  } catch {
    return undefined
  }
}

/** The parent pid of `pid` from /proc/<pid>/stat, or undefined when it is gone. */
function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
  } catch {
    return undefined
  }
}

/**
 * Where a held init stands: `held` once it waits in `read` on the block descriptor (its mounts are
 * final), `orphaned` when its outer bwrap ended (nobody would see the command), `gone`,
 * `unreadable` (this process may not inspect it), or `setting-up`.
 */
function initState(init: { pid: number; parent: number }, readSyscall: number): 'held' | 'orphaned' | 'gone' | 'unreadable' | 'setting-up' {
  let syscall: string
  try {
    syscall = readFileSync(`/proc/${init.pid}/syscall`, 'latin1')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    return code === 'ENOENT' || code === 'ESRCH' ? 'gone' : 'unreadable'
  }
  const parent = parentOf(init.pid)
  if (parent === undefined) return 'gone'
  if (parent !== init.parent) return 'orphaned'
  const [number, fd] = syscall.split(' ')
  return Number(number) === readSyscall && fd !== undefined && Number.parseInt(fd, 16) === BLOCK_FD ? 'held' : 'setting-up'
}
