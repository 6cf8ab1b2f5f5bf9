import { readFileSync } from 'node:fs'
import { processExists } from 'dsh-basics'
import type { AppliedTerminalLimits, TerminalLimits } from 'dsh-subprocess'
import { type CgroupFiles, cgroupFs, errorCode } from './files'
import { LAUNCHER_SHELL } from './launcher'
import { parseHierarchies } from './mounts'
import { LIMIT_CONTROLLERS, type LimitController, type LimitHierarchy, type LimitPlacement, placeLimits } from './placement'
import { SessionCgroup } from './session'

/** Where a limiter reads the host's cgroup layout and does its file work; every field has a default. */
export interface CgroupLimiterOptions {
  /** Text of `/proc/self/mountinfo` (undefined: unreadable). */
  readonly mountInfo?: () => string | undefined
  /** Text of `/proc/self/cgroup` (undefined: unreadable). */
  readonly selfCgroup?: () => string | undefined
  /** Filesystem operations (an in-memory tree in tests). */
  readonly files?: CgroupFiles
  /** The host's pid, which names the runtime's parent cgroups. */
  readonly hostPid?: number
  /** Platform; cgroups exist only on Linux. */
  readonly platform?: NodeJS.Platform
  /** True when a pid names a live process (stale parents of dead hosts are swept). */
  readonly isAlive?: (pid: number) => boolean
}

/** What the limiter set up for one terminal: its cgroups (when any) and the caps in force. */
export interface SessionLimits {
  /** The session's cgroups; undefined when nothing is enforced. */
  readonly cgroup: SessionCgroup | undefined
  /** The caps in force, with the reason for any requested one that is not. */
  readonly applied: AppliedTerminalLimits
}

/** Names of parent cgroups: the host pid, then a number per runtime (several can share a process). */
const PARENT_NAME = /^dsh-terminal-(\d+)-(\d+)$/

let runtimes = 0

/**
 * Per-session process and memory caps through cgroups, for one runtime. The host's layout is read
 * once; stale parents of dead hosts are swept at construction; the runtime's parent cgroup in each
 * hierarchy (`dsh-terminal-<hostpid>-<n>`) is created with the first session and removed by
 * {@link dispose}. Best effort: where a cap cannot be enforced the session starts without it, the
 * reason is logged once and reported in `AppliedTerminalLimits.notApplied`.
 */
export class CgroupLimiter {
  readonly #files: CgroupFiles
  readonly #placement: LimitPlacement
  readonly #parentName: string
  readonly #warn: (message: string) => void
  readonly #warned = new Set<string>()
  readonly #parents = new Map<LimitHierarchy, string>()
  #sessions = 0

  /** Reads the layout and sweeps stale parents; `warn` receives each distinct problem once. */
  constructor(options: CgroupLimiterOptions, warn: (message: string) => void) {
    this.#files = options.files ?? cgroupFs
    this.#warn = warn
    const hostPid = options.hostPid ?? process.pid
    this.#parentName = `dsh-terminal-${hostPid}-${++runtimes}`
    this.#placement = detectLimitPlacement(options, this.#files)
    for (const hierarchy of this.#placement.hierarchies) this.#sweep(hierarchy.base, hostPid, options.isAlive ?? processExists)
  }

  /** The hierarchies in use and why any limit controller is missing (for diagnostics and tests). */
  get placement(): LimitPlacement {
    return this.#placement
  }

  /**
   * Create a session's cgroups with `limits` written, or say why not. Setup failures degrade (the
   * session starts without caps); only a failed join after this succeeded fails a spawn.
   */
  open(limits: TerminalLimits | undefined): SessionLimits {
    const wanted = LIMIT_CONTROLLERS.filter((controller) => requested(limits, controller) !== undefined)
    if (wanted.length === 0) return { cgroup: undefined, applied: {} }
    const missing = [...new Set(wanted.flatMap((controller) => this.#placement.unavailable.get(controller) ?? []))]
    const hierarchies = this.#placement.hierarchies.filter((hierarchy) => hierarchy.controllers.some((controller) => wanted.includes(controller)))
    if (hierarchies.length === 0) return this.#unlimited(missing.join('; '))
    const created: string[] = []
    let where = ''
    try {
      const name = `session-${++this.#sessions}`
      const applied: { maxProcesses?: number; maxMemoryBytes?: number } = {}
      for (const hierarchy of hierarchies) {
        where = hierarchy.base
        const dir = `${this.#parent(hierarchy)}/${name}`
        this.#files.mkdir(dir)
        created.push(dir)
        for (const controller of hierarchy.controllers.filter((candidate) => wanted.includes(candidate))) {
          const file = `${dir}/${limitFile(hierarchy.version, controller)}`
          const value = requested(limits, controller) as number
          this.#files.write(file, String(value))
          // Report what the kernel stored (memory is rounded down to a page).
          const stored = Number.parseInt(this.#files.read(file) ?? '', 10)
          applied[controller === 'pids' ? 'maxProcesses' : 'maxMemoryBytes'] = Number.isSafeInteger(stored) ? stored : value
        }
      }
      if (missing.length > 0) this.#warnOnce(missing.join('; '))
      const report = missing.length > 0 ? { ...applied, notApplied: missing.join('; ') } : applied
      return { cgroup: new SessionCgroup(created, report, this.#files, this.#warn), applied: report }
    } catch (error) {
      for (const dir of created.reverse()) removeQuietly(this.#files, dir)
      // The code, not the message: a message names the session's directory and would defeat warn-once.
      return this.#unlimited([`could not create a session cgroup under ${where}: ${errorCode(error)}`, ...missing].join('; '))
    }
  }

  /** The runtime's parent cgroups created so far, one per hierarchy in use (the host-death watchdog removes them too). */
  get parentDirs(): readonly string[] {
    return [...this.#parents.values()]
  }

  /** Remove the runtime's parent cgroups (after every terminal was terminated); returns the ones now gone. Never throws. */
  dispose(): string[] {
    const removed: string[] = []
    for (const parent of this.#parents.values()) {
      if (removeTree(this.#files, parent)) removed.push(parent)
      else this.#warn(`could not remove cgroup ${parent}; the next start sweeps it`)
    }
    this.#parents.clear()
    return removed
  }

  /** The runtime's parent in a hierarchy, created on first use (v2: with the controllers enabled for sessions). */
  #parent(hierarchy: LimitHierarchy): string {
    const known = this.#parents.get(hierarchy)
    if (known) return known
    const parent = `${hierarchy.base}/${this.#parentName}`
    this.#files.mkdir(parent)
    try {
      if (hierarchy.version === 2) this.#files.write(`${parent}/cgroup.subtree_control`, hierarchy.controllers.map((controller) => `+${controller}`).join(' '))
    } catch (error) {
      removeQuietly(this.#files, parent)
      throw error
    }
    this.#parents.set(hierarchy, parent)
    return parent
  }

  /** Remove parents left by hosts that died without disposing their runtime (empty cgroups only). */
  #sweep(base: string, hostPid: number, alive: (pid: number) => boolean): void {
    for (const name of this.#files.subdirectories(base)) {
      const owner = Number(PARENT_NAME.exec(name)?.[1])
      if (Number.isSafeInteger(owner) && owner !== hostPid && !alive(owner)) removeTree(this.#files, `${base}/${name}`)
    }
  }

  #unlimited(reason: string): SessionLimits {
    this.#warnOnce(reason)
    return { cgroup: undefined, applied: { notApplied: reason } }
  }

  #warnOnce(reason: string): void {
    if (this.#warned.has(reason)) return
    this.#warned.add(reason)
    this.#warn(`per-session limits are not enforced: ${reason}; sessions start without them`)
  }
}

function requested(limits: TerminalLimits | undefined, controller: LimitController): number | undefined {
  return controller === 'pids' ? limits?.maxProcesses : limits?.maxMemoryBytes
}

function limitFile(version: 1 | 2, controller: LimitController): string {
  if (controller === 'pids') return 'pids.max'
  return version === 2 ? 'memory.max' : 'memory.limit_in_bytes'
}

/** rmdir the session directories inside `dir`, then `dir`; true when `dir` is gone. */
function removeTree(files: CgroupFiles, dir: string): boolean {
  for (const child of files.subdirectories(dir)) removeQuietly(files, `${dir}/${child}`)
  return removeQuietly(files, dir)
}

function removeQuietly(files: CgroupFiles, dir: string): boolean {
  try {
    files.rmdir(dir)
    return true
  } catch (error) {
    return errorCode(error) === 'ENOENT'
  }
}

/**
 * Where this host can enforce each session limit (pids, memory) with cgroups, or why not: the
 * limiter's start, and `doctor`'s report. Reads `/proc/self/mountinfo` and `/proc/self/cgroup` and
 * looks at the hierarchies; writes nothing.
 */
export function detectLimitPlacement(
  options: Pick<CgroupLimiterOptions, 'platform' | 'mountInfo' | 'selfCgroup'> = {},
  files: CgroupFiles = cgroupFs,
): LimitPlacement {
  const platform = options.platform ?? process.platform
  const everywhere = (reason: string): LimitPlacement => ({
    hierarchies: [],
    unavailable: new Map(LIMIT_CONTROLLERS.map((controller) => [controller, reason])),
  })
  if (platform !== 'linux') return everywhere(`cgroups exist only on Linux, not on ${platform}`)
  const mountInfo = (options.mountInfo ?? (() => readText('/proc/self/mountinfo')))()
  const selfCgroup = (options.selfCgroup ?? (() => readText('/proc/self/cgroup')))()
  if (mountInfo === undefined || selfCgroup === undefined) return everywhere('cannot read /proc/self/mountinfo and /proc/self/cgroup')
  if (!files.exists(LAUNCHER_SHELL)) return everywhere(`${LAUNCHER_SHELL}, which joins a session to its cgroups, does not exist`)
  return placeLimits(parseHierarchies(mountInfo, selfCgroup), files)
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return undefined
  }
}
