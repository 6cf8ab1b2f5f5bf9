import { execFileSync } from 'node:child_process'

/**
 * Whether `program` is on this machine's PATH, so a test of it can be skipped where it is not. With
 * `CI=true` a missing program throws instead: CI installs every program a test needs (`.ci/run`),
 * and a test skipped there for want of one would pass without having run.
 */
export function installed(program: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${program}`], { stdio: 'ignore' })
    return true
  } catch {
    if (process.env.CI === 'true') throw new Error(`${program} must be installed when CI=true (add it to .ci/run): its tests would be skipped silently`)
    return false
  }
}
