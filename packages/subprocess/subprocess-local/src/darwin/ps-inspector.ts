import { execFile, execFileSync } from 'node:child_process'
import type { ForegroundFacts, ForegroundProgram } from 'dsh-subprocess'
import type { MemberScan, MemberScope, ProcessIdentity, ProcessInspector, ProcessRecord, SignalDisposition } from '../inspector'
import { ownsTerminal } from '../ownership'
import { parsePsTable, PS_COLUMNS } from './ps-parser'

/** Runs a command and resolves its stdout; a non-zero exit (ps: "no such pid") still yields stdout. */
export type CommandRunner = (file: string, args: readonly string[]) => Promise<string>

/** Synchronous {@link CommandRunner}, for the host's exit handler. */
export type SyncCommandRunner = (file: string, args: readonly string[]) => string

const PS_ENV = { ...process.env, LC_ALL: 'C' }

/** Run `ps` for real, in the C locale so `lstart` is stable. */
export const runCommand: CommandRunner = (file, args) =>
  new Promise((resolve) => {
    execFile(file, [...args], { env: PS_ENV, maxBuffer: 64 * 1024 * 1024 }, (_error, stdout) => resolve(String(stdout ?? '')))
  })

/** Synchronous `ps`, for the host's exit handler. */
export const runCommandSync: SyncCommandRunner = (file, args) => {
  try {
    return execFileSync(file, [...args], { env: PS_ENV, maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'ignore'] }).toString()
  } catch (error) {
    return String((error as { stdout?: unknown }).stdout ?? '')
  }
}

/**
 * The macOS inspector: one `ps` listing per scan gives the foreground group (`tpgid`), the tree
 * by ppid and `lstart` identities. Zombies count as gone. It cannot prove stdin waits, and it
 * does not know signal dispositions or sessions, so teardown falls back to grace and tree walks.
 */
export class DarwinInspector implements ProcessInspector {
  readonly #run: CommandRunner
  readonly #runSync: SyncCommandRunner
  readonly #now: () => number

  /** `now` is the wall clock `lstart` is compared with (tests pin it). */
  constructor(run: CommandRunner = runCommand, runSync: SyncCommandRunner = runCommandSync, now: () => number = Date.now) {
    this.#run = run
    this.#runSync = runSync
    this.#now = now
  }

  async record(identity: ProcessIdentity): Promise<ProcessRecord | undefined> {
    const record = await this.identify(identity.pid)
    return record?.started === identity.started ? record : undefined
  }

  async identify(pid: number): Promise<ProcessRecord | undefined> {
    return parsePsTable(await this.#run('ps', ['-o', PS_COLUMNS, '-p', String(pid)])).get(pid)
  }

  async foreground(shell: ProcessIdentity, sequence: number, remember: (records: readonly ProcessRecord[]) => void): Promise<ForegroundFacts | undefined> {
    const table = parsePsTable(await this.#run('ps', ['-A', '-o', PS_COLUMNS]))
    const top = table.get(shell.pid)
    if (!top || top.started !== shell.started || top.zombie || !ownsTerminal(top)) return undefined
    const below = descendants(table, [top], false)
    remember(below)
    const program = programOf([top, ...below], top.tpgid, this.#now())
    return {
      sequence,
      processGroupId: top.tpgid,
      isShellGroup: top.pgid === top.tpgid,
      stdinWaitProof: 'unprovable',
      complete: false,
      waits: [],
      threads: [],
      ...(program && { program }),
    }
  }

  async members(scope: MemberScope): Promise<MemberScan> {
    return membersOf(parsePsTable(await this.#run('ps', ['-A', '-o', PS_COLUMNS])), scope)
  }

  membersSync(scope: MemberScope): MemberScan {
    return membersOf(parsePsTable(this.#runSync('ps', ['-A', '-o', PS_COLUMNS])), scope)
  }

  async alive(identities: readonly ProcessIdentity[]): Promise<ProcessIdentity[]> {
    if (identities.length === 0) return []
    return living(parsePsTable(await this.#run('ps', ['-o', PS_COLUMNS, '-p', pidList(identities)])), identities)
  }

  aliveSync(identities: readonly ProcessIdentity[]): ProcessIdentity[] {
    if (identities.length === 0) return []
    return living(parsePsTable(this.#runSync('ps', ['-o', PS_COLUMNS, '-p', pidList(identities)])), identities)
  }

  /** `ps` shows no program image identity: never claims a fork is pending its exec. */
  async sameImage(): Promise<boolean> {
    return false
  }

  async disposition(): Promise<SignalDisposition | undefined> {
    return undefined
  }
}

/**
 * The group leader, else the first live member, as far as one `ps` listing knows it: the accounting
 * name and the age from `lstart` (whole seconds, local time). `argv[0]` is not split out of `ps`.
 */
function programOf(tree: readonly ProcessRecord[], processGroupId: number, now: number): ForegroundProgram | undefined {
  const group = tree.filter((record) => record.pgid === processGroupId && !record.zombie)
  const leader = group.find((record) => record.pid === processGroupId)
  const chosen = leader ?? group[0]
  if (!chosen?.command) return undefined
  const started = Date.parse(chosen.started)
  return {
    pid: chosen.pid,
    started: chosen.started,
    role: chosen === leader ? 'leader' : 'member',
    command: chosen.command,
    ...(Number.isFinite(started) ? { elapsedMs: Math.max(0, now - started) } : {}),
  }
}

function membersOf(table: Map<number, ProcessRecord>, scope: MemberScope): MemberScan {
  const roots: ProcessRecord[] = []
  const top = table.get(scope.shell.pid)
  const shellPresent = top?.started === scope.shell.started
  for (const identity of scope.tracked) {
    const record = table.get(identity.pid)
    if (record?.started === identity.started) roots.push(record)
  }
  const found = shellPresent ? descendants(table, [top!], false) : []
  const seen = new Set([scope.shell.pid, ...found.map((record) => record.pid)])
  for (const root of roots) {
    if (!seen.has(root.pid)) for (const record of descendants(table, [root], true, seen)) found.push(record)
  }
  return { members: found.filter((record) => !record.zombie && record.pid !== scope.shell.pid) }
}

/** Post-order (children first) walk of the ppid tree below `roots`. */
function descendants(table: Map<number, ProcessRecord>, roots: ProcessRecord[], includeRoots: boolean, seen = new Set<number>()): ProcessRecord[] {
  const byParent = new Map<number, ProcessRecord[]>()
  for (const record of table.values()) {
    const siblings = byParent.get(record.ppid)
    if (siblings) siblings.push(record)
    else byParent.set(record.ppid, [record])
  }
  const out: ProcessRecord[] = []
  const visit = (record: ProcessRecord, include: boolean) => {
    if (seen.has(record.pid) && include) return
    seen.add(record.pid)
    for (const child of byParent.get(record.pid) ?? []) if (!seen.has(child.pid)) visit(child, true)
    if (include) out.push(record)
  }
  for (const root of roots) visit(root, includeRoots)
  return out
}

function living(table: Map<number, ProcessRecord>, identities: readonly ProcessIdentity[]): ProcessIdentity[] {
  return identities.filter((identity) => {
    const record = table.get(identity.pid)
    return record?.started === identity.started && !record.zombie
  })
}

function pidList(identities: readonly ProcessIdentity[]): string {
  return identities.map((identity) => identity.pid).join(',')
}
