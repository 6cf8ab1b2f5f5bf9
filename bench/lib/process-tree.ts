import { readFileSync } from 'node:fs'
import { until } from './measure'

/** Direct children of `pid` (its main thread's list), or none once it is gone. */
export function children(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)
  } catch {
    return []
  }
}

/** Wait until `pid` has the 20-process tree of the close benches and every member runs `sleep` (the TERM-ignorer exec'd). */
export async function treeReady(pid: number): Promise<number[]> {
  return until(() => {
    const kids = children(pid)
    if (kids.length < 20) return undefined
    const sleeping = kids.every((kid) => {
      try {
        return readFileSync(`/proc/${kid}/comm`, 'utf8').trim() === 'sleep'
      } catch {
        return false
      }
    })
    return sleeping ? kids : undefined
  }, 'the 20-process tree')
}
