import { readdirSync, readFileSync } from 'node:fs'

/** A process as /proc identifies it: pid plus start time, so a recycled pid never matches. */
export interface ProcIdentity {
  pid: number
  started: string
  command: string
}

interface Stat {
  ppid: number
  state: string
  started: string
  command: string
}

/** Fields of /proc/<pid>/stat (split after the command's last ')'), or undefined once it is gone. */
function readStat(pid: number): Stat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const close = text.lastIndexOf(')')
    const fields = text.slice(close + 2).split(' ')
    return { state: fields[0]!, ppid: Number(fields[1]), started: fields[19]!, command: text.slice(text.indexOf('(') + 1, close) }
  } catch {
    return undefined
  }
}

/** Every live process that descends from `root` (root included), by walking parent pids. */
export function descendants(root: number): ProcIdentity[] {
  const children = new Map<number, number[]>()
  const stats = new Map<number, Stat>()
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    const stat = readStat(Number(name))
    if (!stat) continue
    stats.set(Number(name), stat)
    children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), Number(name)])
  }
  const found: ProcIdentity[] = []
  const queue = [root]
  while (queue.length) {
    const pid = queue.shift()!
    const stat = stats.get(pid)
    if (!stat) continue
    found.push({ pid, started: stat.started, command: stat.command })
    queue.push(...(children.get(pid) ?? []))
  }
  return found
}

/** True while the exact process (same pid and start time) exists and is not a zombie. */
export function alive(process: ProcIdentity): boolean {
  const stat = readStat(process.pid)
  return stat !== undefined && stat.started === process.started && stat.state !== 'Z' && stat.state !== 'X'
}
