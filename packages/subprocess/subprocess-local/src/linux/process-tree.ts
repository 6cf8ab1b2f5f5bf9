import type { ProcessRecord } from '../inspector'
import type { Scan } from '../slice'
import type { ProcSource } from './proc-source'
import { parseStat } from './stat-parser'

/**
 * Walks process trees for one scan. Children come from `/proc/<pid>/task/<tid>/children` (one
 * small read per thread) when the kernel has them, otherwise from a ppid index built by a single
 * pass over `/proc`. Each pid's stat is read at most once per scan.
 */
export class ProcessTree {
  readonly #source: ProcSource
  readonly #childrenFiles: boolean
  readonly #records = new Map<number, ProcessRecord | undefined>()
  #byParent: Map<number, number[]> | undefined

  constructor(source: ProcSource, childrenFiles: boolean) {
    this.#source = source
    this.#childrenFiles = childrenFiles
  }

  /** The record of `pid` as read in this scan (memoised; `undefined` if gone or unreadable). */
  record(pid: number): ProcessRecord | undefined {
    if (!this.#records.has(pid)) this.#records.set(pid, parseStat(this.#source.text(`/proc/${pid}/stat`)))
    return this.#records.get(pid)
  }

  /** Child pids of a process (of all its threads). */
  children(parent: ProcessRecord): number[] {
    if (!this.#childrenFiles) return this.#index().get(parent.pid) ?? []
    const tids = parent.threads > 1 ? (this.#source.list(`/proc/${parent.pid}/task`) ?? [String(parent.pid)]) : [String(parent.pid)]
    return tids.flatMap((tid) => parseChildren(this.#source.text(`/proc/${parent.pid}/task/${tid}/children`)))
  }

  /**
   * Children a reaper may have adopted. The kernel hands an orphan to the first live thread of the
   * reaper — its leader unless the leader already exited — so only that thread's children file is
   * read (a busy host and pid 1 have many threads; the orphans are all in one place).
   */
  adoptedChildren(reaper: ProcessRecord): number[] {
    if (!this.#childrenFiles || reaper.threads <= 1 || reaper.zombie) return this.children(reaper)
    return parseChildren(this.#source.text(`/proc/${reaper.pid}/task/${reaper.pid}/children`))
  }

  /** Every pid in /proc (used only without children files, for orphan candidates). */
  allPids(): number[] {
    return [...this.#index().values()].flat()
  }

  /**
   * Walk `root`'s subtree and append every process to `out` after its own children (post-order),
   * skipping pids already in `visited`. A child whose ppid no longer names its parent raced with
   * a reparent or pid reuse and is left for the next scan.
   */
  *walk(root: ProcessRecord, visited: Set<number>, out: ProcessRecord[], includeRoot = true): Scan<void> {
    if (visited.has(root.pid)) return
    visited.add(root.pid)
    for (const pid of this.children(root)) {
      if (visited.has(pid)) continue
      const child = this.record(pid)
      if (!child || child.ppid !== root.pid) continue
      yield
      yield* this.walk(child, visited, out)
    }
    if (includeRoot) out.push(root)
  }

  #index(): Map<number, number[]> {
    if (this.#byParent) return this.#byParent
    const byParent = new Map<number, number[]>()
    for (const name of this.#source.list('/proc') ?? []) {
      if (!/^\d+$/.test(name)) continue
      const record = this.record(Number(name))
      if (!record) continue
      const siblings = byParent.get(record.ppid)
      if (siblings) siblings.push(record.pid)
      else byParent.set(record.ppid, [record.pid])
    }
    this.#byParent = byParent
    return byParent
  }
}

/** The pids listed in a `children` file (space-separated; missing or empty means none). */
function parseChildren(text: string | undefined): number[] {
  const children: number[] = []
  for (const token of text?.trim().split(/\s+/) ?? []) {
    const pid = Number(token)
    if (token !== '' && Number.isSafeInteger(pid) && pid > 0) children.push(pid)
  }
  return children
}

/** Our own process and its ancestors up to pid 1: where the orphans of a session get reparented. */
export function ancestorsOf(tree: ProcessTree, selfPid: number): ProcessRecord[] {
  const chain: ProcessRecord[] = []
  const seen = new Set<number>()
  for (let pid = selfPid; pid > 0 && !seen.has(pid); ) {
    seen.add(pid)
    const record = tree.record(pid)
    if (!record) break
    chain.push(record)
    pid = record.ppid
  }
  if (!seen.has(1)) {
    const init = tree.record(1)
    if (init) chain.push(init)
  }
  return chain
}

/** True when fd 0, 1 or 2 of `pid` is the terminal device `terminal`. */
export function holdsTerminal(source: ProcSource, pid: number, terminal: number): boolean {
  for (const fd of [0, 1, 2]) {
    if (source.file(`/proc/${pid}/fd/${fd}`)?.rdev === terminal) return true
  }
  return false
}
