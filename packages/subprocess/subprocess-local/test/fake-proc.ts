import type { FileIdentity, ProcSource } from '../src/internal'

/** One fake process for {@link FakeProc}. */
export interface FakeProcess {
  pid: number
  ppid?: number
  pgid?: number
  sid?: number
  tty?: number
  tpgid?: number
  state?: string
  threads?: number
  start?: number
  comm?: string
}

/** An in-memory /proc: stat lines, per-thread syscall/status, memory, fds and fdinfo. */
export class FakeProc implements ProcSource {
  readonly files = new Map<string, string>()
  readonly memory = new Map<number, Array<{ address: number; bytes: Buffer }>>()
  readonly fds = new Map<string, FileIdentity>()
  readonly pids = new Map<number, Required<FakeProcess>>()
  childrenFiles = true

  process(spec: FakeProcess): this {
    const p: Required<FakeProcess> = {
      ppid: 1,
      pgid: spec.pid,
      sid: spec.pid,
      tty: 0,
      tpgid: -1,
      state: 'S',
      threads: 1,
      start: 1000,
      comm: `p${spec.pid}`,
      ...spec,
    }
    this.pids.set(p.pid, p)
    const fields = [p.state, p.ppid, p.pgid, p.sid, p.tty, p.tpgid, 4194560, 0, 0, 0, 0, 0, 0, 0, 0, 20, 0, p.threads, 0, p.start, 100, 200]
    this.files.set(`/proc/${p.pid}/stat`, `${p.pid} (${p.comm}) ${fields.join(' ')} 0 0 0\n`)
    return this
  }

  /** A thread blocked in / running / outside a syscall, with its switch counters. */
  thread(pid: number, tid: number, syscall: string, voluntary = 5, nonvoluntary = 1): this {
    this.files.set(`/proc/${pid}/task/${tid}/syscall`, `${syscall}\n`)
    this.files.set(`/proc/${pid}/task/${tid}/status`, `Name:\tx\nvoluntary_ctxt_switches:\t${voluntary}\nnonvoluntary_ctxt_switches:\t${nonvoluntary}\n`)
    return this
  }

  mem(pid: number, address: number, bytes: Buffer): this {
    const regions = this.memory.get(pid) ?? []
    regions.push({ address, bytes })
    this.memory.set(pid, regions)
    return this
  }

  fd(pid: number, fd: number, rdev: number, ino = 1): this {
    this.fds.set(`/proc/${pid}/fd/${fd}`, { rdev, ino })
    return this
  }

  status(pid: number, text: string): this {
    this.files.set(`/proc/${pid}/status`, text)
    return this
  }

  file(path: string): FileIdentity | undefined {
    return this.fds.get(path)
  }

  text(path: string): string | undefined {
    const children = /^\/proc\/(\d+)\/task\/(\d+)\/children$/.exec(path)
    if (children) {
      if (!this.childrenFiles || !this.pids.has(Number(children[1]))) return undefined
      // Attribute every child to the main thread unless a test wrote the file itself.
      if (this.files.has(path)) return this.files.get(path)
      if (children[1] !== children[2]) return ''
      return [...this.pids.values()]
        .filter((p) => p.ppid === Number(children[1]))
        .map((p) => `${p.pid} `)
        .join('')
    }
    return this.files.get(path)
  }

  list(path: string): string[] | undefined {
    if (path === '/proc') return [...this.pids.keys()].map(String).concat(['self', 'uptime'])
    const task = /^\/proc\/(\d+)\/task$/.exec(path)
    if (task) {
      const prefix = `/proc/${task[1]}/task/`
      const tids = new Set([...this.files.keys()].filter((key) => key.startsWith(prefix)).map((key) => key.slice(prefix.length).split('/')[0]!))
      return tids.size > 0 ? [...tids] : undefined
    }
    return undefined
  }

  bytes(path: string, offset: number, length: number): Buffer | undefined {
    const mem = /^\/proc\/(\d+)\/mem$/.exec(path)
    const region = mem && this.memory.get(Number(mem[1]))?.find((r) => offset >= r.address && offset + length <= r.address + r.bytes.length)
    return region ? region.bytes.subarray(offset - region.address, offset - region.address + length) : undefined
  }
}

/** Device number of /dev/pts/0 (major 136), as the fixtures' terminal. */
export const PTS0 = 136 << 8
/** Some other terminal. */
export const PTS1 = (136 << 8) | 1
/** /dev/tty. */
export const DEV_TTY = 5 << 8
