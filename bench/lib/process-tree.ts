import { children, eventually, processName } from 'dsh-testkit'

/** Wait until `pid` has the 20-process tree of the close benches and every member runs `sleep` (the TERM-ignorer exec'd). */
export async function treeReady(pid: number): Promise<number[]> {
  return eventually(() => {
    const kids = children(pid)
    if (kids.length < 20) return undefined
    return kids.every((kid) => processName(kid) === 'sleep') ? kids : undefined
  }, 'the 20-process tree')
}
