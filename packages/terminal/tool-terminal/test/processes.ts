import { readdirSync, readFileSync } from 'node:fs'

/** The fields of /proc/<pid>/stat after the parenthesised command name (index 0 is field 3, the state). */
function statFields(pid: number | string): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
}

/** Pids of live (non-zombie) processes whose parent is this test process: what a test leaked. */
export function childProcesses(): number[] {
  const pids: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const fields = statFields(entry)
      if (Number(fields[1]) === process.pid && fields[0] !== 'Z') pids.push(Number(entry))
    } catch {
      // The process ended while we looked.
    }
  }
  return pids
}

/** True while `pid` exists (signal 0 probes without delivering anything). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** The process group that owns the terminal of `pid` (field 8, tpgid). */
export function terminalForegroundGroup(pid: number): number {
  return Number(statFields(pid)[5])
}

/** The command name of `pid`, or '' once it is gone. */
export function commandName(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim()
  } catch {
    return ''
  }
}
