import { describe, expect, it } from 'vitest'
import { LinuxInspector, type ProcessRecord } from '../src/internal'
import { DEV_TTY, FakeProc, PTS0, PTS1 } from './fake-proc'

const SELF = 50
const SHELL = { pid: 100, started: '1000' }
const hex = (n: number) => `0x${n.toString(16)}`
const blocked = (nr: number, ...args: number[]) => [nr, ...[...args, 0, 0, 0, 0, 0, 0].slice(0, 6).map(hex), '0x7ffd0000', '0x7f000000'].join(' ')

/** Host (pid 50, child of init) running a bash (100) whose foreground job is pgid 200. */
function session(tpgid = 200): FakeProc {
  return new FakeProc()
    .process({ pid: 1, ppid: 0, pgid: 1, sid: 1, start: 1 })
    .process({ pid: SELF, ppid: 1, pgid: SELF, sid: SELF, start: 500 })
    .process({ pid: 100, ppid: SELF, pgid: 100, sid: 100, tty: PTS0, tpgid, start: 1000 })
    .thread(100, 100, blocked(61, 200))
}

function inspector(proc: FakeProc, arch = 'x64') {
  return new LinuxInspector({ source: proc, arch, selfPid: SELF, childrenFiles: proc.childrenFiles })
}

async function foreground(proc: FakeProc, arch = 'x64') {
  const remembered: ProcessRecord[] = []
  const facts = await inspector(proc, arch).foreground(SHELL, 7, (records) => remembered.push(...records))
  return { facts, remembered }
}

describe('LinuxInspector.foreground (fixtures)', () => {
  it('proves read(0) on the terminal and reports the counters', async () => {
    const proc = session()
      .process({ pid: 200, ppid: 100, pgid: 200, sid: 100, tty: PTS0, start: 1100 })
      .thread(200, 200, blocked(0, 0, 0x1000, 4096), 9, 2)
      .fd(200, 0, PTS0)
    const { facts, remembered } = await foreground(proc)
    expect(facts).toMatchObject({ sequence: 7, processGroupId: 200, isShellGroup: false, stdinWaitProof: 'proven', complete: true })
    expect(facts!.waits).toEqual([
      {
        pid: 200,
        tid: 200,
        started: '1100',
        state: 'stdin-wait',
        syscall: 0,
        syscallName: 'read',
        fd: 0,
        voluntaryCtxtSwitches: 9,
        nonvoluntaryCtxtSwitches: 2,
      },
    ])
    expect(remembered.map((record) => record.pid)).toEqual([200])
  })

  it('proves pselect6 from the fd set in process memory, and misses when memory is unreadable', async () => {
    const proc = session(100)
      .thread(100, 100, blocked(270, 1, 0x5000))
      .fd(100, 0, PTS0)
    expect((await foreground(proc)).facts!.stdinWaitProof).toBe('unproven')
    expect((await foreground(proc)).facts!.threads[0]).toMatchObject({ state: 'unknown', syscall: 270 })
    expect((await foreground(proc)).facts!.complete).toBe(false)
    proc.mem(100, 0x5000, Buffer.from([0b1]))
    const { facts } = await foreground(proc)
    expect(facts).toMatchObject({ isShellGroup: true, stdinWaitProof: 'proven', complete: true })
    expect(facts!.waits[0]).toMatchObject({ syscallName: 'pselect6', fd: 0 })
  })

  it('attaches the timeout a proven wait was called with, and none to a wait without one', async () => {
    const timespec = Buffer.alloc(16)
    timespec.writeBigInt64LE(3n, 0)
    const timed = session(100)
      .thread(100, 100, blocked(270, 1, 0x5000, 0, 0, 0x5100))
      .mem(100, 0x5000, Buffer.from([0b1]))
      .mem(100, 0x5100, timespec)
      .fd(100, 0, PTS0)
    expect((await foreground(timed)).facts!.waits[0]).toMatchObject({ syscallName: 'pselect6', fd: 0, timeoutMs: 3000 })
    const untimed = session(100)
      .thread(100, 100, blocked(270, 1, 0x5000))
      .mem(100, 0x5000, Buffer.from([0b1]))
      .fd(100, 0, PTS0)
    expect((await foreground(untimed)).facts!.waits[0]).not.toHaveProperty('timeoutMs')
  })

  it('does not prove select on other fds, or a select without a read set', async () => {
    const other = session(100)
      .thread(100, 100, blocked(23, 8, 0x5000))
      .mem(100, 0x5000, Buffer.from([0b1000_0000]))
      .fd(100, 7, 0, 99)
    expect((await foreground(other)).facts!.threads[0]).toMatchObject({ state: 'blocked', syscall: 23, voluntaryCtxtSwitches: 5 })
    const sleeping = session(100).thread(100, 100, blocked(23, 0, 0))
    expect((await foreground(sleeping)).facts!.threads[0]!.state).toBe('blocked')
  })

  it('proves poll only for a pollfd on the terminal with POLLIN', async () => {
    const entry = (fd: number, events: number) => {
      const buffer = Buffer.alloc(8)
      buffer.writeInt32LE(fd, 0)
      buffer.writeInt16LE(events, 4)
      return buffer
    }
    const base = () => session(100).fd(100, 0, PTS0).fd(100, 5, 0, 77)
    const pollin = base()
      .thread(100, 100, blocked(7, 0x6000, 2))
      .mem(100, 0x6000, Buffer.concat([entry(5, 1), entry(0, 1)]))
    expect((await foreground(pollin)).facts!.waits[0]).toMatchObject({ syscallName: 'poll', fd: 0 })
    const pollout = base()
      .thread(100, 100, blocked(271, 0x6000, 1))
      .mem(100, 0x6000, entry(0, 4))
    expect((await foreground(pollout)).facts!.stdinWaitProof).toBe('unproven')
    const unreadable = base().thread(100, 100, blocked(7, 0x6000, 1))
    expect((await foreground(unreadable)).facts!.threads[0]!.state).toBe('unknown')
  })

  it('proves epoll from fdinfo when the registered inode is the terminal, and misses on unreadable fdinfo', async () => {
    const proc = session(100).thread(100, 100, blocked(281, 9)).fd(100, 20, PTS0, 3)
    expect((await foreground(proc)).facts!.threads[0]!.state).toBe('unknown')
    proc.files.set('/proc/100/fdinfo/9', 'pos:\t0\nflags:\t02\nmnt_id:\t1\ntfd:       20 events:       19 data: 14  pos:0 ino:3 sdev:18\n')
    expect((await foreground(proc)).facts!.waits[0]).toMatchObject({ syscallName: 'epoll_pwait', fd: 20 })
    proc.fd(100, 20, PTS0, 4) // fd 20 now names another file than the one registered
    expect((await foreground(proc)).facts!.threads[0]!.state).toBe('unknown')
  })

  it('accepts /dev/tty only in a process controlled by this terminal', async () => {
    const make = (tty: number) =>
      session().process({ pid: 200, ppid: 100, pgid: 200, sid: 100, tty, start: 1100 }).thread(200, 200, blocked(0, 3)).fd(200, 3, DEV_TTY)
    expect((await foreground(make(PTS0))).facts!.waits[0]).toMatchObject({ fd: 3 })
    expect((await foreground(make(PTS1))).facts!.stdinWaitProof).toBe('unproven')
  })

  it('samples every thread and proves a wait in a non-leader thread', async () => {
    const proc = session()
      .process({ pid: 200, ppid: 100, pgid: 200, sid: 100, tty: PTS0, threads: 3, start: 1100 })
      .thread(200, 200, blocked(202, 0x10))
      .thread(200, 201, 'running')
      .thread(200, 202, blocked(0, 0))
      .fd(200, 0, PTS0)
    const { facts } = await foreground(proc)
    expect(facts!.threads.map((thread) => [thread.tid, thread.state])).toEqual([
      [200, 'blocked'],
      [201, 'running'],
      [202, 'stdin-wait'],
    ])
    expect(facts!.waits[0]).toMatchObject({ pid: 200, tid: 202 })
  })

  it('reports a zombie-only foreground group without threads or proof', async () => {
    const proc = session().process({ pid: 200, ppid: 100, pgid: 200, sid: 100, state: 'Z', start: 1100 })
    const { facts } = await foreground(proc)
    expect(facts).toMatchObject({ processGroupId: 200, stdinWaitProof: 'unproven', complete: true, threads: [], waits: [] })
  })

  it('cannot prove anything on an unsupported architecture but still reports the group', async () => {
    const proc = session(100).thread(100, 100, blocked(0, 0)).fd(100, 0, PTS0)
    const { facts } = await foreground(proc, 'riscv64')
    expect(facts).toMatchObject({ processGroupId: 100, isShellGroup: true, stdinWaitProof: 'unprovable', complete: false })
  })

  it('reports nothing for a recycled pid, a zombie shell, or one that does not own its terminal yet', async () => {
    expect(await inspector(session()).foreground({ pid: 100, started: '999' }, 1, () => {})).toBeUndefined()
    expect((await foreground(session().process({ pid: 100, ppid: SELF, state: 'Z', tty: PTS0, tpgid: 200, start: 1000 }))).facts).toBeUndefined()
    const forkedNotYetSetsid = session().process({ pid: 100, ppid: SELF, pgid: SELF, sid: SELF, tty: PTS1, tpgid: 77, start: 1000 })
    expect((await foreground(forkedNotYetSetsid)).facts).toBeUndefined()
  })

  it('treats an unreadable or malformed syscall file as unknown, never as a wait', async () => {
    const proc = session(100).fd(100, 0, PTS0)
    proc.files.set('/proc/100/task/100/syscall', 'garbage\n')
    expect((await foreground(proc)).facts!.threads[0]!.state).toBe('unknown')
    proc.files.delete('/proc/100/task/100/syscall')
    expect((await foreground(proc)).facts).toMatchObject({ stdinWaitProof: 'unproven', complete: false })
  })
})

describe('LinuxInspector.foreground: what the group does when it does not read (fixtures)', () => {
  /** A job (pgid 200) of a leader 200 and a child 201, in front of bash 100; the host booted 20.55 s ago. */
  function job(leader: string, child: string): FakeProc {
    const proc = session()
      .process({ pid: 200, ppid: 100, pgid: 200, sid: 100, tty: PTS0, start: 1100, comm: 'make' })
      .thread(200, 200, leader)
      .process({ pid: 201, ppid: 200, pgid: 200, sid: 100, tty: PTS0, start: 1900, comm: 'sleep' })
      .thread(201, 201, child)
      .fd(200, 0, PTS0)
      .fd(201, 0, PTS0)
      .fd(201, 4, 0, 55)
    proc.files.set('/proc/uptime', '20.55 40.10\n')
    proc.files.set('/proc/200/cmdline', '/usr/bin/make\0-j2\0')
    proc.files.set('/proc/201/cmdline', 'sleep\x0030\0')
    return proc
  }

  it('names the syscalls that take no terminal input and proves the group is not reading', async () => {
    const { facts } = await foreground(job(blocked(61, -1 >>> 0), blocked(230, 0, 0, 0x7000)))
    expect(facts!.threads.map((thread) => [thread.tid, thread.state, thread.syscallName, thread.notReading])).toEqual([
      [201, 'blocked', 'clock_nanosleep', true],
      [200, 'blocked', 'wait4', true],
    ])
    expect(facts).toMatchObject({ stdinWaitProof: 'unproven', complete: true, notReadingProven: true })
    // No counters: these threads cannot hold a stdin wait, so nothing needs to prove they ran.
    expect(facts!.threads[0]!.voluntaryCtxtSwitches).toBeUndefined()
  })

  it('counts a wait on other files as not reading, with its counters', async () => {
    const { facts } = await foreground(job(blocked(61, 0), blocked(0, 4, 0x1000, 1)))
    expect(facts!.threads[0]).toMatchObject({ state: 'blocked', syscallName: 'read', notReading: true, voluntaryCtxtSwitches: 5 })
    expect(facts!.notReadingProven).toBe(true)
  })

  it('proves nothing for a running thread, an unnamed syscall or an undecidable wait', async () => {
    for (const child of ['running', blocked(19, 0, 0x1000, 1), blocked(0, 9, 0x1000, 1)]) {
      const { facts } = await foreground(job(blocked(61, 0), child))
      expect(facts!.threads[0]!.notReading).toBeUndefined()
      expect(facts!.notReadingProven).toBe(false)
    }
    // readv (19) on x86-64 is blocked but unnamed: it could be reading the terminal.
    expect((await foreground(job(blocked(61, 0), blocked(19, 0)))).facts!.threads[0]).toMatchObject({ state: 'blocked', syscall: 19 })
  })

  it('names the group leader with comm, argv[0] and its age since it started', async () => {
    const { facts } = await foreground(job(blocked(61, 0), blocked(230, 0)))
    // Started at tick 1100 (11.00 s after boot), sampled 20.55 s after boot.
    expect(facts!.program).toEqual({ pid: 200, started: '1100', role: 'leader', command: 'make', argv0: 'make', elapsedMs: 9550 })
  })

  it('names the process holding a proven wait before the leader', async () => {
    const { facts } = await foreground(job(blocked(61, 0), blocked(0, 0, 0x1000, 1)))
    expect(facts!.program).toMatchObject({ pid: 201, role: 'waiting', command: 'sleep', argv0: 'sleep', elapsedMs: 1550 })
  })

  it('falls back to a member when the leader is gone, and leaves out what it cannot read', async () => {
    const proc = job(blocked(61, 0), blocked(230, 0)).process({ pid: 200, ppid: 100, pgid: 200, sid: 100, tty: PTS0, state: 'Z', start: 1100 })
    proc.files.delete('/proc/uptime')
    proc.files.delete('/proc/201/cmdline')
    expect((await foreground(proc)).facts!.program).toEqual({ pid: 201, started: '1900', role: 'member', command: 'sleep' })
  })

  it('reports the program even where syscalls cannot be decoded, but proves nothing', async () => {
    const { facts } = await foreground(job(blocked(61, 0), blocked(230, 0)), 'riscv64')
    expect(facts!.program).toMatchObject({ pid: 200, role: 'leader', command: 'make' })
    expect(facts!.notReadingProven).toBeUndefined()
  })
})

describe('LinuxInspector.members (fixtures)', () => {
  /** bash 100 → 200 → 201, plus an orphan 300 in the session and a setsid'd holder 400 (both under init). */
  function tree(): FakeProc {
    return session()
      .process({ pid: 200, ppid: 100, pgid: 200, sid: 100, tty: PTS0, start: 1100 })
      .process({ pid: 201, ppid: 200, pgid: 200, sid: 100, tty: PTS0, start: 1101 })
      .process({ pid: 300, ppid: 1, pgid: 300, sid: 100, tty: PTS0, start: 1200 })
      .process({ pid: 301, ppid: 300, pgid: 300, sid: 100, tty: PTS0, start: 1201 })
      .process({ pid: 400, ppid: 1, pgid: 400, sid: 400, tty: 0, start: 1300 })
      .fd(400, 1, PTS0)
      .process({ pid: 500, ppid: 1, pgid: 500, sid: 500, tty: 0, start: 10 })
      .fd(500, 0, PTS0)
      .process({ pid: 600, ppid: SELF, pgid: 600, sid: 600, tty: PTS1, start: 1400 })
  }

  const pids = (records: readonly ProcessRecord[]) => records.map((record) => record.pid)

  it('walks the tree children first without sweeping anything else', async () => {
    const scan = await inspector(tree()).members({ shell: SHELL, tracked: [], thorough: false })
    expect(pids(scan.members)).toEqual([201, 200])
  })

  it('adopts same-session orphans and terminal holders started after the shell in a thorough scan', async () => {
    const scan = await inspector(tree()).members({ shell: SHELL, tracked: [], thorough: true, terminalDevice: PTS0 })
    // 500 holds the terminal but started before the shell; 600 is another session's shell; 50 and 1 are never members.
    expect(pids(scan.members).sort()).toEqual([200, 201, 300, 301, 400])
    expect(pids(scan.members).indexOf(301)).toBeLessThan(pids(scan.members).indexOf(300))
    expect(scan.shellGoneTick).toBeUndefined()
  })

  it('skips the other terminals’ top-level processes unread, and still adopts orphans reparented to us', async () => {
    // 700: a session member reparented to our own process (as when the host is a subreaper).
    const proc = tree().process({ pid: 700, ppid: SELF, pgid: 700, sid: 100, tty: PTS0, start: 1500 })
    const read: string[] = []
    const text = proc.text.bind(proc)
    proc.text = (path) => (read.push(path), text(path))
    const scan = await inspector(proc).members({ shell: SHELL, tracked: [], thorough: true, terminalDevice: PTS0, otherTerminals: new Set([600]) })
    expect(pids(scan.members).sort()).toEqual([200, 201, 300, 301, 400, 700])
    expect(read.filter((path) => path.startsWith('/proc/600/'))).toEqual([])
    // Without the hint the other terminal is read (and rejected: another terminal, another session).
    read.length = 0
    await inspector(proc).members({ shell: SHELL, tracked: [], thorough: true, terminalDevice: PTS0 })
    expect(read).toContain('/proc/600/stat')
  })

  it('looks for orphans only in the children of a reaper’s first live thread', async () => {
    // init with 3 threads: the kernel hands orphans to its leader thread (1); thread 3 forked 800 itself.
    const proc = tree().process({ pid: 1, ppid: 0, pgid: 1, sid: 1, start: 1, threads: 3 })
    proc.process({ pid: 800, ppid: 1, pgid: 800, sid: 800, start: 1600 })
    proc.files.set('/proc/1/task/1/children', '300 400 500 ')
    proc.files.set('/proc/1/task/3/children', '800 ')
    const read: string[] = []
    const text = proc.text.bind(proc)
    proc.text = (path) => (read.push(path), text(path))
    const scan = await inspector(proc).members({ shell: SHELL, tracked: [], thorough: true, terminalDevice: PTS0 })
    expect(pids(scan.members).sort()).toEqual([200, 201, 300, 301, 400])
    expect(read.filter((path) => path.startsWith('/proc/1/task/'))).toEqual(['/proc/1/task/1/children'])
    // Once the leader exited (a zombie with live threads), every thread's children are read.
    proc.process({ pid: 1, ppid: 0, pgid: 1, sid: 1, start: 1, threads: 3, state: 'Z' })
    proc.thread(1, 1, 'running').thread(1, 3, 'running')
    read.length = 0
    const fallback = await inspector(proc).members({ shell: SHELL, tracked: [], thorough: true, terminalDevice: PTS0 })
    expect(read).toContain('/proc/1/task/3/children')
    expect(pids(fallback.members).sort()).toEqual([200, 201, 300, 301, 400])
  })

  it('does not adopt holders once the PTY is closed', async () => {
    const scan = await inspector(tree()).members({ shell: SHELL, tracked: [], thorough: true })
    expect(pids(scan.members)).not.toContain(400)
  })

  it('keeps reparented tracked processes and fences session adoption once the shell is gone', async () => {
    const proc = tree()
    proc.pids.delete(100)
    proc.files.delete('/proc/100/stat')
    proc.process({ pid: 200, ppid: 1, pgid: 200, sid: 100, tty: 0, start: 1100 })
    proc.files.set('/proc/uptime', '12.345 20.00\n')
    const scan = await inspector(proc).members({ shell: SHELL, tracked: [{ pid: 200, started: '1100' }], thorough: true })
    expect(scan.shellGoneTick).toBe(1235)
    expect(pids(scan.members).sort()).toEqual([200, 201, 300, 301])
    // A later scan keeps the first fence: a session member started after it is not adopted.
    proc.process({ pid: 700, ppid: 1, pgid: 700, sid: 100, start: 1236 })
    const later = await inspector(proc).members({ shell: SHELL, tracked: [], thorough: true, shellGoneTick: 1235 })
    expect(later.shellGoneTick).toBeUndefined()
    expect(pids(later.members)).not.toContain(700)
    expect(pids(later.members)).toContain(300)
  })

  it('never follows a recycled shell pid', async () => {
    const proc = tree().process({ pid: 100, ppid: 1, pgid: 100, sid: 100, tty: PTS1, start: 9999 })
    proc.files.set('/proc/uptime', '99.99 1\n')
    const scan = await inspector(proc).members({ shell: SHELL, tracked: [], thorough: false })
    expect(scan.members).toEqual([])
  })

  it('falls back to one pass over /proc without children files', async () => {
    const proc = tree()
    proc.childrenFiles = false
    const scan = await inspector(proc).members({ shell: SHELL, tracked: [], thorough: true, terminalDevice: PTS0 })
    expect(pids(scan.members).sort()).toEqual([200, 201, 300, 301, 400])
  })

  it('reports liveness by identity and treats zombies as gone', async () => {
    const proc = tree().process({ pid: 201, ppid: 200, pgid: 200, sid: 100, state: 'Z', start: 1101 })
    const alive = await inspector(proc).alive([
      { pid: 200, started: '1100' },
      { pid: 201, started: '1101' },
      { pid: 300, started: '4242' },
      { pid: 999, started: '1' },
    ])
    expect(alive).toEqual([{ pid: 200, started: '1100' }])
  })

  it('reads dispositions only for a matching identity', async () => {
    const proc = tree().status(200, 'SigBlk:\t0\nSigIgn:\t0000000000004000\nSigCgt:\t0\n')
    expect(await inspector(proc).disposition({ pid: 200, started: '1100' })).toEqual({ termIgnored: true, hupIgnored: false, termHandled: false })
    expect(await inspector(proc).disposition({ pid: 200, started: '1' })).toBeUndefined()
  })
})
