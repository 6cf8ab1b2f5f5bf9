import { execFileSync } from 'node:child_process'

/** Whether `program` is on this machine's PATH, so a test of it can be skipped where it is not. */
export function installed(program: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${program}`], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}
