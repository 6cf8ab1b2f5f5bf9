import type { ForegroundFacts, StdinWait, ThreadSample } from 'dsh-subprocess'
import type { MemberScan, MemberScope, ProcessIdentity, ProcessInspector, ProcessRecord, SignalDisposition } from '../inspector'
import { ownsTerminal } from '../ownership'
import { runSliced, runSync, type Scan } from '../slice'
import { procFs, type ProcSource, uptimeTicks } from './proc-source'
import { ancestorsOf, holdsTerminal, ProcessTree } from './process-tree'
import { foregroundProgram } from './program'
import { parseStat } from './stat-parser'
import { parseDisposition } from './status-parser'
import { sampleThread, type WaitContext } from './stdin-wait'
import { syscallTable, type SyscallTable } from './syscall-table'

/** Dependencies of the Linux inspector; tests replace /proc with fixtures. */
export interface LinuxInspectorOptions {
  /** Where /proc is read from (default: the real /proc). */
  readonly source?: ProcSource
  /** CPU architecture deciding the syscall table (default: `process.arch`). */
  readonly arch?: string
  /** Our own pid: never adopted, and the start of the orphan-reaper chain (default: `process.pid`). */
  readonly selfPid?: number
  /** Whether `/proc/<pid>/task/<tid>/children` exists (default: probed on our own process). */
  readonly childrenFiles?: boolean
}

/** The /proc inspector: foreground facts with stdin-wait proof, member scans, dispositions. */
export class LinuxInspector implements ProcessInspector {
  readonly #source: ProcSource
  readonly #table: SyscallTable | undefined
  readonly #selfPid: number
  readonly #childrenFiles: boolean

  constructor(options: LinuxInspectorOptions = {}) {
    this.#source = options.source ?? procFs
    this.#table = syscallTable(options.arch ?? process.arch)
    this.#selfPid = options.selfPid ?? process.pid
    this.#childrenFiles = options.childrenFiles ?? this.#source.text(`/proc/${this.#selfPid}/task/${this.#selfPid}/children`) !== undefined
  }

  async record(identity: ProcessIdentity): Promise<ProcessRecord | undefined> {
    return this.recordNow(identity)
  }

  recordNow(identity: ProcessIdentity): ProcessRecord | undefined {
    const record = this.#read(identity.pid)
    return record?.started === identity.started ? record : undefined
  }

  async identify(pid: number): Promise<ProcessRecord | undefined> {
    return this.#read(pid)
  }

  identifyNow(pid: number): ProcessRecord | undefined {
    return this.#read(pid)
  }

  foreground(shell: ProcessIdentity, sequence: number, remember: (records: readonly ProcessRecord[]) => void): Promise<ForegroundFacts | undefined> {
    return runSliced(this.#foreground(shell, sequence, remember))
  }

  members(scope: MemberScope): Promise<MemberScan> {
    return runSliced(this.#members(scope))
  }

  membersSync(scope: MemberScope): MemberScan {
    return runSync(this.#members(scope))
  }

  async alive(identities: readonly ProcessIdentity[]): Promise<ProcessIdentity[]> {
    return this.aliveSync(identities)
  }

  aliveSync(identities: readonly ProcessIdentity[]): ProcessIdentity[] {
    return identities.filter((identity) => {
      const record = this.#read(identity.pid)
      return record?.started === identity.started && !record.zombie
    })
  }

  async sameImage(pid: number, parent: number): Promise<boolean> {
    const commandLine = this.#source.text(`/proc/${pid}/cmdline`)
    if (!commandLine || commandLine !== this.#source.text(`/proc/${parent}/cmdline`)) return false
    const image = this.#source.file(`/proc/${pid}/exe`)
    const parentImage = this.#source.file(`/proc/${parent}/exe`)
    // Same arguments and the same executable inode: the same image, short of a coincidence nobody stages.
    return image !== undefined && parentImage !== undefined && image.ino === parentImage.ino
  }

  async disposition(identity: ProcessIdentity): Promise<SignalDisposition | undefined> {
    const record = this.#read(identity.pid)
    if (record?.started !== identity.started) return undefined
    // The stat just read carries the masks on every kernel this runs on; `status` only for a stat without them.
    return record.disposition ?? parseDisposition(this.#source.text(`/proc/${identity.pid}/status`))
  }

  #read(pid: number): ProcessRecord | undefined {
    return parseStat(this.#source.text(`/proc/${pid}/stat`))
  }

  *#foreground(shell: ProcessIdentity, sequence: number, remember: (records: readonly ProcessRecord[]) => void): Scan<ForegroundFacts | undefined> {
    const tree = new ProcessTree(this.#source, this.#childrenFiles)
    const top = tree.record(shell.pid)
    if (!top || top.started !== shell.started || top.zombie || !ownsTerminal(top)) return undefined
    const descendants: ProcessRecord[] = []
    yield* tree.walk(top, new Set(), descendants, false)
    remember(descendants)
    const processGroupId = top.tpgid
    const group = [top, ...descendants].filter((record) => record.pgid === processGroupId && !record.zombie)
    const facts = { sequence, processGroupId, isShellGroup: top.pgid === processGroupId }
    if (!this.#table || !top.ttyNr) {
      const program = foregroundProgram(this.#source, group, processGroupId, [])
      return {
        ...facts,
        // A CPU without a syscall table cannot prove waits; a shell without a terminal just proves none.
        stdinWaitProof: this.#table ? 'unproven' : 'unprovable',
        complete: false,
        waits: [],
        threads: [],
        ...(program && { program }),
      }
    }
    const context: WaitContext = { source: this.#source, table: this.#table, terminal: top.ttyNr, files: new Map() }
    const threads: ThreadSample[] = []
    let complete = true
    for (const member of group) {
      const tids = member.threads > 1 ? this.#source.list(`/proc/${member.pid}/task`) : [String(member.pid)]
      if (!tids) {
        complete = false
        continue
      }
      for (const tid of tids) {
        const sample = sampleThread(context, member, Number(tid))
        if (sample.state === 'unknown') complete = false
        threads.push(sample)
        yield
      }
    }
    const waits = threads.filter((thread): thread is StdinWait => thread.state === 'stdin-wait')
    const notReadingProven = complete && threads.length > 0 && threads.every((thread) => thread.notReading === true)
    const program = foregroundProgram(this.#source, group, processGroupId, waits)
    return { ...facts, stdinWaitProof: waits.length > 0 ? 'proven' : 'unproven', complete, waits, threads, notReadingProven, ...(program && { program }) }
  }

  *#members(scope: MemberScope): Scan<MemberScan> {
    const tree = new ProcessTree(this.#source, this.#childrenFiles)
    const visited = new Set<number>()
    const found: ProcessRecord[] = []
    const { shell } = scope
    const top = tree.record(shell.pid)
    const shellPresent = top?.started === shell.started
    if (top && shellPresent) yield* tree.walk(top, visited, found, false)
    else visited.add(shell.pid)
    for (const identity of scope.tracked) {
      const record = tree.record(identity.pid)
      if (record?.started === identity.started) yield* tree.walk(record, visited, found)
    }
    let shellGoneTick = scope.shellGoneTick
    let newlyGone: number | undefined
    if (scope.thorough) {
      if (!shellPresent && shellGoneTick === undefined) shellGoneTick = newlyGone = uptimeTicks(this.#source)
      const reapers = ancestorsOf(tree, this.#selfPid)
      for (const reaper of reapers) visited.add(reaper.pid)
      const candidates = this.#childrenFiles ? reapers.flatMap((reaper) => tree.adoptedChildren(reaper)) : tree.allPids()
      for (const pid of candidates) {
        if (visited.has(pid) || scope.otherTerminals?.has(pid)) continue
        const record = tree.record(pid)
        if (record && this.#adoptable(record, scope, shellPresent, shellGoneTick)) yield* tree.walk(record, visited, found)
        yield
      }
    }
    const members = found.filter((record) => !record.zombie && record.pid !== shell.pid && record.pid !== this.#selfPid)
    return { members, shellGoneTick: newlyGone }
  }

  /**
   * An orphan belongs to the session when it is still in the shell's session — while the shell's
   * identity holds, or when it started before the shell was seen gone (its pid cannot have been
   * reused by then) — or when it was started after the shell and keeps the PTY as stdio (a
   * `setsid` child) while the PTY is open.
   */
  #adoptable(record: ProcessRecord, scope: MemberScope, shellPresent: boolean, shellGoneTick: number | undefined): boolean {
    if (record.sid === scope.shell.pid) {
      if (shellPresent) return true
      if (shellGoneTick !== undefined && Number(record.started) <= shellGoneTick) return true
    }
    const terminal = scope.terminalDevice
    if (terminal === undefined || BigInt(record.started) < BigInt(scope.shell.started)) return false
    if (record.ttyNr !== 0 && record.ttyNr !== terminal) return false
    return holdsTerminal(this.#source, record.pid, terminal)
  }
}
