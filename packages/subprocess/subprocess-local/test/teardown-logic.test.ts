import { describe, expect, it } from 'vitest'
import { isSubprocessError, type ForegroundFacts } from 'dsh-subprocess'
import type { MemberScan, MemberScope, ProcessIdentity, ProcessInspector, ProcessRecord, SignalDisposition } from '../src/internal'
import { teardown, type TeardownTarget } from '../src/teardown'
import { Tracker } from '../src/tracker'

interface FakeProcess {
  record: ProcessRecord
  disposition?: SignalDisposition
  /** Signals that end it (default: TERM, HUP, KILL). */
  diesOn?: NodeJS.Signals[]
  /** Children it forks when it receives SIGTERM. */
  forksOnTerm?: ProcessRecord[]
}

const rec = (pid: number, ppid: number, extra: Partial<ProcessRecord> = {}): ProcessRecord => ({
  pid,
  started: String(pid * 10),
  ppid,
  pgid: pid,
  sid: 1,
  tpgid: 1,
  ttyNr: 1,
  zombie: false,
  stopped: false,
  threads: 1,
  ...extra,
})

/** A process table driven by the signals teardown sends. */
class FakeWorld implements ProcessInspector {
  readonly table = new Map<number, FakeProcess>()
  readonly log: string[] = []
  /** Every scope teardown scanned with. */
  readonly scopes: MemberScope[] = []
  undying = new Set<number>()
  /** Settles once the top-level process (pid 1) left the table, as the PTY reports its exit. */
  readonly exited: Promise<void>
  #reportExit: () => void = () => {}

  constructor() {
    this.exited = new Promise((resolve) => (this.#reportExit = resolve))
  }

  add(process: FakeProcess): this {
    this.table.set(process.record.pid, process)
    return this
  }

  send = (pid: number, signal: NodeJS.Signals) => {
    this.log.push(`${signal} ${pid}`)
    const process = this.table.get(pid)
    if (!process || this.undying.has(pid)) return
    if (signal === 'SIGTERM') for (const child of process.forksOnTerm?.splice(0) ?? []) this.add({ record: child })
    if ((process.diesOn ?? ['SIGTERM', 'SIGHUP', 'SIGKILL']).includes(signal) || signal === 'SIGKILL') this.table.delete(pid)
    if (!this.table.has(1)) this.#reportExit()
  }

  #live(identity: ProcessIdentity) {
    const process = this.table.get(identity.pid)
    return process?.record.started === identity.started ? process : undefined
  }

  async record(identity: ProcessIdentity) {
    return this.#live(identity)?.record
  }
  async identify(pid: number) {
    return this.table.get(pid)?.record
  }
  async foreground(): Promise<ForegroundFacts | undefined> {
    return undefined
  }
  async members(scope: MemberScope): Promise<MemberScan> {
    this.scopes.push(scope)
    return this.membersSync(scope)
  }
  membersSync(scope: MemberScope): MemberScan {
    const out: ProcessRecord[] = []
    const visit = (pid: number) => {
      for (const child of [...this.table.values()].filter((p) => p.record.ppid === pid)) {
        visit(child.record.pid)
        out.push(child.record)
      }
    }
    if (this.#live(scope.shell)) visit(scope.shell.pid)
    for (const tracked of scope.tracked) if (this.#live(tracked) && !out.some((r) => r.pid === tracked.pid)) out.push(this.#live(tracked)!.record)
    return { members: out }
  }
  async alive(identities: readonly ProcessIdentity[]) {
    return this.aliveSync(identities)
  }
  aliveSync(identities: readonly ProcessIdentity[]) {
    return identities.filter((identity) => this.#live(identity) && !this.#live(identity)!.record.zombie)
  }
  async disposition(identity: ProcessIdentity) {
    return this.#live(identity)?.disposition
  }
  async sameImage() {
    return false
  }
}

function target(world: FakeWorld, graceMs = 50): TeardownTarget {
  return {
    inspector: world,
    shell: { pid: 1, started: '10' },
    tracker: new Tracker(1),
    graceMs,
    killWaitMs: 30,
    ptyOpen: () => true,
    exited: world.exited,
    send: world.send,
  }
}

const bashDisposition = { termIgnored: true, hupIgnored: false }

describe('teardown (fake process table)', () => {
  it('sweeps for holders of the PTY only once the child owns it, never of the host’s terminal', async () => {
    // Closed right after spawn, before setsid(): the child's stat still shows the host's terminal (99).
    const early = new FakeWorld().add({ record: rec(1, 0, { sid: 77, pgid: 77, tpgid: 77, ttyNr: 99 }), disposition: bashDisposition })
    const tracker = new Tracker(1)
    await teardown({ ...target(early), tracker })
    expect(tracker.terminalDevice).toBeUndefined()
    expect(early.scopes.map((scope) => scope.terminalDevice)).toEqual([undefined, undefined])
    // A session leader owning its PTY (device 136) names it.
    const owning = new FakeWorld().add({ record: rec(1, 0, { ttyNr: 136 }), disposition: bashDisposition })
    await teardown(target(owning))
    expect(owning.scopes[0]?.terminalDevice).toBe(136)
  })

  it('signals children before parents, then HUPs an interactive shell', async () => {
    const world = new FakeWorld()
      .add({ record: rec(1, 0), disposition: bashDisposition })
      .add({ record: rec(2, 1), disposition: { termIgnored: false, hupIgnored: false } })
      .add({ record: rec(3, 2), disposition: { termIgnored: false, hupIgnored: false } })
    await teardown(target(world))
    expect(world.log).toEqual(['SIGTERM 3', 'SIGTERM 2', 'SIGHUP 1'])
  })

  it('SIGKILLs a TERM-ignorer at once and TERM+HUPs a shell whose dispositions are unknown', async () => {
    const world = new FakeWorld().add({ record: rec(1, 0) }).add({ record: rec(2, 1), disposition: { termIgnored: true, hupIgnored: true } })
    await teardown(target(world, 60_000))
    expect(world.log).toEqual(['SIGKILL 2', 'SIGTERM 1', 'SIGHUP 1'])
  })

  it('kills what was forked during SIGTERM (the rescan) and a shell that ignores everything', async () => {
    const world = new FakeWorld()
      .add({ record: rec(1, 0), disposition: { termIgnored: true, hupIgnored: true } })
      .add({ record: rec(2, 1), disposition: { termIgnored: false, hupIgnored: false }, forksOnTerm: [rec(5, 1)] })
    await teardown(target(world))
    expect(world.log).toEqual(['SIGTERM 2', 'SIGKILL 5', 'SIGKILL 1'])
  })

  it('escalates to SIGKILL after the grace for a TERM handler that does not exit', async () => {
    const world = new FakeWorld()
      .add({ record: rec(1, 0), disposition: bashDisposition })
      .add({ record: rec(2, 1), disposition: { termIgnored: false, hupIgnored: false }, diesOn: [] })
    await teardown(target(world, 20))
    expect(world.log).toEqual(['SIGTERM 2', 'SIGKILL 2', 'SIGHUP 1'])
  })

  it('fails with the surviving pids and succeeds when retried after they went away', async () => {
    const world = new FakeWorld()
      .add({ record: rec(1, 0), disposition: bashDisposition })
      .add({ record: rec(2, 1), disposition: { termIgnored: true, hupIgnored: true } })
    world.undying.add(2)
    const first = target(world)
    const error = await teardown(first).catch((caught: unknown) => caught)
    expect(isSubprocessError(error, 'CLEANUP_FAILED')).toBe(true)
    expect((error as { survivors: number[] }).survivors).toEqual([2])
    expect(first.tracker.list()).toEqual([{ pid: 2, started: '20' }])
    world.undying.clear()
    await expect(teardown(first)).resolves.toBe('scan')
    expect(world.table.size).toBe(0)
  })

  it('re-delivers SIGHUP to a shell that lost the first one (readline race) instead of waiting out the grace', async () => {
    const world = new FakeWorld().add({ record: rec(1, 0), disposition: bashDisposition })
    let hups = 0
    const send = world.send
    world.send = (pid, signal) => {
      if (signal === 'SIGHUP' && ++hups === 1) return void world.log.push('SIGHUP 1 (lost)')
      send(pid, signal)
    }
    // A grace far beyond the test's timeout: a teardown that waited it out fails the test.
    await teardown({ ...target(world, 600_000), send: world.send })
    expect(world.log).toEqual(['SIGHUP 1 (lost)', 'SIGHUP 1'])
  })

  it('resumes a stopped member so it can act on SIGTERM', async () => {
    const world = new FakeWorld()
      .add({ record: rec(1, 0), disposition: bashDisposition })
      .add({ record: rec(2, 1, { stopped: true }), disposition: { termIgnored: false, hupIgnored: false }, diesOn: ['SIGCONT'] })
    await teardown(target(world))
    expect(world.log.slice(0, 2)).toEqual(['SIGTERM 2', 'SIGCONT 2'])
  })
})

/** The session's cgroups over a fake table: every live process in it is listed; `listings` counts the reads. */
function containment(world: FakeWorld) {
  let readable = true
  const cgroup = {
    listings: 0,
    members: () => {
      cgroup.listings += 1
      return readable ? [...world.table.values()].filter((p) => !p.record.zombie).map((p) => p.record.pid) : undefined
    },
    breakListing: () => (readable = false),
  }
  return cgroup
}

/** {@link containment} with the pids controller's counter (zombies count, as they do in the kernel). */
function countedContainment(world: FakeWorld) {
  return Object.assign(containment(world), { tasks: () => world.table.size })
}

const fatalTerm = { termIgnored: false, hupIgnored: false, termHandled: false }
const handlesTerm = { termIgnored: false, hupIgnored: false, termHandled: true }

describe('teardown of a session in cgroups (fake process table)', () => {
  it('proves an idle session quiescent from the listing alone: no /proc scan', async () => {
    const world = new FakeWorld().add({ record: rec(1, 0), disposition: bashDisposition })
    await expect(teardown({ ...target(world), containment: containment(world) })).resolves.toBe('cgroup')
    expect(world.log).toEqual(['SIGHUP 1'])
    expect(world.scopes).toEqual([])
  })

  it('needs no listing when the task counter shows only the shell before and nothing after', async () => {
    const world = new FakeWorld().add({ record: rec(1, 0), disposition: bashDisposition })
    const cgroup = countedContainment(world)
    await expect(teardown({ ...target(world), containment: cgroup })).resolves.toBe('cgroup')
    expect(world.log).toEqual(['SIGHUP 1'])
    expect(cgroup.listings).toBe(0)
    // A member (here a zombie the counter still charges) sends both checks to the listing.
    const busy = new FakeWorld().add({ record: rec(1, 0), disposition: bashDisposition }).add({ record: rec(2, 1, { zombie: true }) })
    const counted = countedContainment(busy)
    await expect(teardown({ ...target(busy), containment: counted })).resolves.toBe('cgroup')
    expect(busy.log).toEqual(['SIGHUP 1'])
    expect(counted.listings).toBe(2)
  })

  it('TERMs every member (youngest first), then the shell at once when no member can use the grace', async () => {
    // 3 dies of SIGTERM only later (uninterruptible, say): the shell does not wait for it, the final pass kills it.
    const world = new FakeWorld()
      .add({ record: rec(1, 0), disposition: bashDisposition })
      .add({ record: rec(2, 1), disposition: fatalTerm })
      .add({ record: rec(3, 2), disposition: fatalTerm, diesOn: [] })
      .add({ record: rec(4, 1), disposition: { termIgnored: true, hupIgnored: true }, diesOn: ['SIGKILL'] })
    await expect(teardown({ ...target(world, 60_000), containment: containment(world) })).resolves.toBe('cgroup')
    // The TERM-ignorer is SIGKILLed once its stat was read, right after the TERMs went out.
    expect(world.log).toEqual(['SIGTERM 4', 'SIGTERM 3', 'SIGTERM 2', 'SIGKILL 4', 'SIGHUP 1', 'SIGKILL 3'])
    expect(world.table.size).toBe(0)
    expect(world.scopes).toEqual([])
  })

  it('resumes a stopped member after its SIGTERM', async () => {
    const world = new FakeWorld()
      .add({ record: rec(1, 0), disposition: bashDisposition })
      .add({ record: rec(2, 1, { stopped: true }), disposition: fatalTerm, diesOn: ['SIGCONT'] })
    await expect(teardown({ ...target(world), containment: containment(world) })).resolves.toBe('cgroup')
    expect(world.log).toEqual(['SIGTERM 2', 'SIGCONT 2', 'SIGHUP 1'])
  })

  it('gives a TERM handler the grace before the shell, then SIGKILLs it and what it forked', async () => {
    const world = new FakeWorld()
      .add({ record: rec(1, 0), disposition: bashDisposition })
      .add({ record: rec(2, 1), disposition: handlesTerm, diesOn: [], forksOnTerm: [rec(5, 2)] })
    await expect(teardown({ ...target(world, 20), containment: containment(world) })).resolves.toBe('cgroup')
    expect(world.log).toEqual(['SIGTERM 2', 'SIGKILL 5', 'SIGKILL 2', 'SIGHUP 1'])
    expect(world.table.size).toBe(0)
  })

  it('stops what the shell forked while it exited (the final pass)', async () => {
    const world = new FakeWorld().add({ record: rec(1, 0), disposition: fatalTerm, forksOnTerm: [rec(6, 1)] })
    world.table.get(1)!.disposition = handlesTerm
    await expect(teardown({ ...target(world), containment: containment(world) })).resolves.toBe('cgroup')
    expect(world.log).toEqual(['SIGTERM 1', 'SIGTERM 6'])
    expect(world.table.size).toBe(0)
  })

  it('lists the cgroups when the tasks still charged are not all zombies it knows of', async () => {
    // The shell forks 6 as it exits; the counter says one task is charged, and 2 (gone) explains none of it.
    const world = new FakeWorld()
      .add({ record: rec(1, 0), disposition: handlesTerm, forksOnTerm: [rec(6, 1)] })
      .add({ record: rec(2, 1), disposition: fatalTerm })
    const cgroup = countedContainment(world)
    await expect(teardown({ ...target(world), containment: cgroup })).resolves.toBe('cgroup')
    expect(world.log).toEqual(['SIGTERM 2', 'SIGTERM 1', 'SIGTERM 6'])
    expect(world.table.size).toBe(0)
  })

  it('names what is still listed after SIGKILL, and a retry succeeds once it is gone', async () => {
    const world = new FakeWorld().add({ record: rec(1, 0), disposition: bashDisposition }).add({ record: rec(2, 1), disposition: fatalTerm })
    world.undying.add(2)
    const first = { ...target(world), containment: containment(world) }
    const error = await teardown(first).catch((caught: unknown) => caught)
    expect(isSubprocessError(error, 'CLEANUP_FAILED')).toBe(true)
    expect((error as { survivors: number[] }).survivors).toEqual([2])
    world.undying.clear()
    await expect(teardown(first)).resolves.toBe('cgroup')
    expect(world.table.size).toBe(0)
  })

  it('resolves only once a member that left the listing while exiting is a zombie or gone', async () => {
    // The kernel drops an exiting process from cgroup.procs a moment before it is a zombie.
    const world = new FakeWorld().add({ record: rec(1, 0), disposition: bashDisposition }).add({ record: rec(2, 1), disposition: fatalTerm, diesOn: [] })
    const exiting = new Set<number>()
    const send = world.send
    world.send = (pid, signal) => {
      send(pid, signal)
      if (pid === 2 && signal === 'SIGTERM') {
        exiting.add(2)
        setTimeout(() => world.table.delete(2), 30)
      }
    }
    const cgroup = { members: () => [...world.table.keys()].filter((pid) => !exiting.has(pid)) }
    await expect(teardown({ ...target(world), send: world.send, containment: cgroup })).resolves.toBe('cgroup')
    expect(world.table.has(2)).toBe(false)
  })

  it('falls back to the /proc scans when the listing cannot be read', async () => {
    const world = new FakeWorld().add({ record: rec(1, 0), disposition: bashDisposition }).add({ record: rec(2, 1), disposition: fatalTerm })
    const broken = containment(world)
    broken.breakListing()
    await expect(teardown({ ...target(world), containment: broken })).resolves.toBe('scan')
    expect(world.log).toEqual(['SIGTERM 2', 'SIGHUP 1'])
    expect(world.scopes.length).toBeGreaterThan(0)
  })
})
