import { readdirSync, readFileSync } from 'node:fs'

/**
 * A process identity that survives pid reuse: the pid plus its start time (field 22 of its stat),
 * so a recycled pid never passes for the process a test saw earlier.
 */
export interface ProcessIdentity {
  readonly pid: number
  /** Start time in clock ticks after boot, as /proc/<pid>/stat writes it. */
  readonly started: string
}

/**
 * Fields of /proc/<pid>/stat after the command name — [state, ppid, pgrp, session, tty_nr, tpgid, …],
 * so index = field number − 3 — or undefined once it is gone. Split after the last `)`: a name may hold spaces.
 */
export function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  } catch {
    return undefined
  }
}

/** True while `pid` exists and is not a zombie: a reaped or unreaped dead process both count as gone. */
export function isAlive(pid: number): boolean {
  const state = statFields(pid)?.[0]
  return state !== undefined && state !== 'Z' && state !== 'X'
}

/** The identity of a live (non-zombie) process, or undefined; hold it to ask {@link stillRunning} later. */
export function identify(pid: number): ProcessIdentity | undefined {
  const fields = statFields(pid)
  return fields && fields[0] !== 'Z' && fields[0] !== 'X' ? { pid, started: fields[19] as string } : undefined
}

/** True while exactly this process (same pid and start time) exists and is not a zombie, even if its pid was reused. */
export function stillRunning(identity: ProcessIdentity): boolean {
  return identify(identity.pid)?.started === identity.started
}

/**
 * Direct children of `pid`, or none once it is gone. Every thread's list is read: a child forked by
 * a worker thread is listed under that thread, not under the main one.
 */
export function children(pid: number): number[] {
  let threads: string[]
  try {
    threads = readdirSync(`/proc/${pid}/task`)
  } catch {
    return []
  }
  return threads.flatMap((thread) => {
    try {
      return readFileSync(`/proc/${pid}/task/${thread}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)
    } catch {
      return []
    }
  })
}

/**
 * Every live descendant of `pid` as seen from the host's /proc, children first (breadth-first), as
 * identities so a later check cannot mistake a recycled pid for a survivor.
 */
export function descendants(pid: number): ProcessIdentity[] {
  const found: ProcessIdentity[] = []
  const queue = [pid]
  while (queue.length > 0) {
    const parent = queue.shift() as number
    for (const child of children(parent)) {
      const identity = identify(child)
      if (identity) found.push(identity)
      queue.push(child)
    }
  }
  return found
}

/** The command name (`comm`) of a process, or undefined once it is gone: tells `sleep` from the shell that forked it. */
export function processName(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim()
  } catch {
    return undefined
  }
}

/** The argv of a process, or undefined once it is gone (or for a kernel thread, whose cmdline is empty). */
export function commandLine(pid: number): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
    return text === '' ? undefined : text.replace(/\0$/, '').split('\0')
  } catch {
    return undefined
  }
}

/** The foreground process group (tpgid) of the terminal that `pid` controls, or undefined once it is gone. */
export function foregroundGroup(pid: number): number | undefined {
  const tpgid = statFields(pid)?.[5]
  return tpgid === undefined ? undefined : Number(tpgid)
}

/**
 * Pids of live processes running exactly `argv` (argv[0] compared by basename, since a spawner may
 * resolve it on PATH): finds what a test started without knowing its pid.
 */
export function processesRunning(argv: readonly string[]): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const running = commandLine(Number(entry))
    if (running && sameArgv(running, argv) && isAlive(Number(entry))) found.push(Number(entry))
  }
  return found
}

/** Pids of live processes whose argv holds every one of `args` (a relay of one test's socket path, say). */
export function processesWithArgs(...args: readonly string[]): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const running = commandLine(Number(entry))
    if (running && args.every((arg) => running.includes(arg)) && isAlive(Number(entry))) found.push(Number(entry))
  }
  return found
}

function sameArgv(running: readonly string[], argv: readonly string[]): boolean {
  if (running.length !== argv.length) return false
  const base = (path: string) => path.slice(path.lastIndexOf('/') + 1)
  return base(running[0] as string) === base(argv[0] as string) && running.slice(1).every((arg, index) => arg === argv[index + 1])
}
